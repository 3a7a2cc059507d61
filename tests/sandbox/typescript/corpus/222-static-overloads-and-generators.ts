class Ids {
  static make(): string;
  static make(prefix: string): string;
  static make(prefix: string, n: number): string[];
  static make(prefix = 'id', n?: number): string | string[] {
    const one = (): string => `${prefix}_${Math.random().toString(36).slice(2, 10)}`;
    return n === undefined ? one() : Array.from({ length: n }, one);
  }
  static async *stream<T>(source: () => Promise<T[]>): AsyncGenerator<T> {
    for (const x of await source()) yield x;
  }
}

const ids = Ids.make('job', 3);
const seen: string[] = [];
for await (const name of Ids.stream<string>(() => codemode.queue_peek({ queue: 'jobs', n: 5 }))) seen.push(name);
return { ids, seen };
