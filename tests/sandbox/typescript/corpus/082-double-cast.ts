async () => {
  interface Metric { name: string; value: number }
  const raw = await codemode.prometheus_query({ query: 'up' });
  const series = raw.data.result as unknown as Array<{ metric: Record<string, string>; value: [number, string] }>;
  const metrics = series.map((s) => ({ name: s.metric.job!, value: Number(s.value[1]) }) as Metric);
  const down = metrics.filter((m) => m.value === 0) as unknown[] as Metric[];
  return down.map((m) => m.name);
}
