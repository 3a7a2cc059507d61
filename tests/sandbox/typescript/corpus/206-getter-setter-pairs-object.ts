const state = {
  _items: [] as string[],
  get count(): number {
    return this._items.length;
  },
  set items(v: string[]) {
    this._items = [...new Set(v)];
  },
  get items(): string[] {
    return this._items;
  },
};
state.items = (await codemode.search_tags({ q: 'infra' })) as string[];
return { count: state.count, first: state.items[0] };
