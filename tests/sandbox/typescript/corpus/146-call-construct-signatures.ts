async () => {
  interface Formatter {
    (value: number): string;
    (value: Date, style?: 'short' | 'long'): string;
    new (locale: string): Formatter;
    readonly locale: string;
  }
  interface Callable<T> {
    <U extends T>(x: U): U[];
  }

  const fmt = ((v: number | Date) => (typeof v === 'number' ? v.toLocaleString('en') : v.toDateString())) as unknown as Formatter;
  const wrap: Callable<string> = (x) => [x];
  const stats = await codemode.analytics_summary({ range: '7d' });
  return { visits: fmt(stats.visits), since: fmt(new Date(stats.since), 'short'), tags: wrap('weekly') };
}
