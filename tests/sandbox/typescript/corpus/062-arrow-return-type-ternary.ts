async () => {
  const ascending: boolean = (await codemode.settings_get({ key: 'sort' })).value === 'asc';
  const cmp = ascending
    ? (a: number, b: number): number => a - b
    : (a: number, b: number): number => b - a;
  const label = ascending ? (n: number): string => `+${n}` : (n: number): string => `-${n}`;
  const values: number[] = await codemode.metrics_values({ metric: 'queue_depth' });
  return values.sort(cmp).slice(0, 5).map(label);
}
