async () => {
  const values: number[] = await codemode.metrics_values({ metric: 'cpu' });
  const lo: number = 10, hi: number = 90;
  const a = values.filter((v) => v < hi && v > lo).length;
  const b = values.filter((v) => lo < v && hi > v).length;
  const inRange = (x: number, min: number, max: number): boolean => min <= x && x <= max;
  const c = values.filter((v) => inRange(v, lo, hi)).length;
  const shifted = values.map((v) => (v << 1) >> 1 >>> 0);
  const cmp = (x: number, y: number) => (x < y ? -1 : x > y ? 1 : 0);
  return { a, b, c, shifted: shifted.length, sorted: [...values].sort(cmp).slice(0, 3) };
}
