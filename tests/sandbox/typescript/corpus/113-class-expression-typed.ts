async () => {
  const Timer = class<T extends string = string> {
    private marks = new Map<T, number>();
    mark(name: T): void {
      this.marks.set(name, Date.now());
    }
    since(name: T): number {
      return Date.now() - (this.marks.get(name) ?? Date.now());
    }
  };
  const t = new Timer<'fetch' | 'parse'>();
  t.mark('fetch');
  const body: string = (await codemode.http_get({ url: 'https://example.com/big.json' })).body;
  const fetchMs = t.since('fetch');
  t.mark('parse');
  const parsed: unknown = JSON.parse(body);
  return { fetchMs, parseMs: t.since('parse'), isArray: Array.isArray(parsed) };
}
