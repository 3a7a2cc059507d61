async () => {
  type Kind = 'cpu' | 'mem' | 'disk';
  const alerts: { kind: Kind; value: number }[] = await codemode.monitoring_list_alerts({ state: 'firing' });
  const advice: string[] = [];
  for (const a of alerts) {
    switch (a.kind) {
      case 'cpu' satisfies Kind:
        advice.push(`scale out: cpu ${a.value}%`);
        break;
      case ('mem' as Kind):
        advice.push(`check leaks: mem ${a.value}%`);
        break;
      case <Kind>'disk':
        advice.push(`clean up: disk ${a.value}%`);
        break;
    }
  }
  return advice;
}
