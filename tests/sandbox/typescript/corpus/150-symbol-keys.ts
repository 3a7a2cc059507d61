async () => {
  const kId: unique symbol = Symbol('id');
  interface Tagged {
    [kId]: string;
    [Symbol.toStringTag]: string;
  }
  class Collection<T> implements Iterable<T> {
    constructor(items: T[]) {
      this.items = items;
    }
    private items: T[];
    [Symbol.iterator](): Iterator<T> {
      return this.items[Symbol.iterator]();
    }
    get [Symbol.toStringTag](): string {
      return 'Collection';
    }
  }
  const records: Tagged[] = (await codemode.kv_list_values({ prefix: 'rec:' })).map((v: string) => ({ [kId]: v, [Symbol.toStringTag]: 'rec' }));
  const c = new Collection<Tagged>(records);
  return { tag: String(c), ids: [...c].map((r) => r[kId]) };
}
