async () => {
  const head = <T>(xs: T[]): T | undefined => xs[0];
  const tail = <T extends unknown>(xs: T[]): T[] => xs.slice(1);
  const toMap = async <K extends string, V>(entries: Promise<[K, V][]>): Promise<Map<K, V>> => new Map(await entries);
  const m = await toMap<string, number>(codemode.kv_entries({ prefix: 'n:' }));
  const keys = [...m.keys()];
  return { head: head(keys), tail: tail(keys).length };
}
