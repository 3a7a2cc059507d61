async () => {
  class Counter<T> {
    counts = new Map<T, number>;
    add(x: T): void {
      this.counts.set(x, (this.counts.get(x) ?? 0) + 1);
    }
  }
  const c = new Counter<string>;
  const d = new Date;
  const visits: { page: string }[] = await codemode.analytics_raw({ day: d.toISOString().slice(0, 10) });
  visits.forEach((v) => c.add(v.page));
  return [...c.counts].sort((a, b) => b[1] - a[1]).slice(0, 5);
}
