async () => {
  function outer<T>(items: T[]) {
    function inner<U extends T>(pred: (x: T) => x is U): U[] {
      return items.filter(pred);
    }
    function count(pred: (x: T) => boolean): number {
      return items.filter(pred).length;
    }
    return { inner, count };
  }
  type Item = { kind: 'a'; a: number } | { kind: 'b'; b: string };
  const items: Item[] = await codemode.kv_list_values({ prefix: 'item:' });
  const h = outer(items);
  const as = h.inner((x): x is Extract<Item, { kind: 'a' }> => x.kind === 'a');
  return { as: as.map((x) => x.a), bs: h.count((x) => x.kind === 'b') };
}
