async () => {
  function* chunk<T>(items: Iterable<T>, size: number): Generator<T[], void, unknown> {
    let buf: T[] = [];
    for (const it of items) {
      buf.push(it);
      if (buf.length === size) {
        yield buf;
        buf = [];
      }
    }
    if (buf.length) yield buf;
  }
  class Range implements Iterable<number> {
    constructor(private_start: number, end: number) {
      this.start = private_start;
      this.end = end;
    }
    start: number;
    end: number;
    *[Symbol.iterator](): Iterator<number> {
      for (let i = this.start; i < this.end; i++) yield i;
    }
  }
  const ids = [...new Range(1, 26)];
  let processed = 0;
  for (const batch of chunk(ids, 10)) {
    await codemode.batch_submit({ ids: batch });
    processed += batch.length;
  }
  return processed;
}
