async () => {
  class Stopwatch {
    #start: number = 0;
    #laps: number[] = [];
    static #instances: number = 0;

    constructor() {
      Stopwatch.#instances++;
    }
    start(): void {
      this.#start = performance.now();
    }
    lap(): number {
      const t = performance.now() - this.#start;
      this.#laps.push(t);
      return t;
    }
    get laps(): readonly number[] {
      return this.#laps;
    }
    static get count(): number {
      return Stopwatch.#instances;
    }
  }

  const sw = new Stopwatch();
  sw.start();
  await codemode.db_query({ sql: 'select 1' });
  sw.lap();
  await codemode.cache_get({ key: 'warmup' });
  sw.lap();
  return { laps: sw.laps.map((l) => Math.round(l)), watches: Stopwatch.count };
}
