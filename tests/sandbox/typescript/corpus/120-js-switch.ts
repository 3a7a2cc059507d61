async () => {
  const alerts = await codemode.monitoring_list_alerts({ state: 'firing' });
  const buckets = { critical: [], warning: [], info: [] };
  for (const a of alerts) {
    switch (a.labels.severity) {
      case 'critical':
      case 'page':
        buckets.critical.push(a.labels.alertname);
        break;
      case 'warning':
        buckets.warning.push(a.labels.alertname);
        break;
      default:
        buckets.info.push(a.labels.alertname);
    }
  }
  return buckets;
}
