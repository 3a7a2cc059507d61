async () => {
  const usage = await codemode.billing_usage({ month: '2024-05' });
  const lines: string[] = [];
  for (const [service, cost] of Object.entries(usage.costs) as [string, number][]) {
    if (cost < 1) continue;
    lines.push(`${service.padEnd(20)} $${cost.toFixed(2)}`);
  }
  return lines.join('\n');
}
