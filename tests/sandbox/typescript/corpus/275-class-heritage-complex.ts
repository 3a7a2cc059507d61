async () => {
  class Base<T> {
    constructor(items: T[]) {
      this.items = items;
    }
    items: T[];
  }
  const Mixed = (Base as new <T>(items: T[]) => Base<T>);
  class Tags extends Mixed<string> {
    has(t: string): boolean {
      return this.items.includes(t);
    }
  }
  class Scores extends (class<N extends number> extends Base<N> {})<number> {
    max(): number {
      return Math.max(...this.items);
    }
  }
  const t = new Tags(await codemode.notes_get_tags({}));
  const s = new Scores([1, 5, 3]);
  return { urgent: t.has('urgent'), max: s.max() };
}
