async () => {
  type Row = { name: string; value: number };
  const toRow = (k: string, v: number) => ({ name: k, value: v }) satisfies Row;
  const toRows = (o: Record<string, number>) => Object.entries(o).map(([k, v]) => toRow(k, v)) satisfies Row[];
  const metrics: Record<string, number> = await codemode.metrics_snapshot({ service: 'api' });
  return toRows(metrics).sort((a, b) => b.value - a.value).slice(0, 5);
}
