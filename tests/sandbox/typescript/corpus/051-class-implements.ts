async () => {
  interface Store<K, V> {
    get(key: K): V | undefined;
    set(key: K, value: V): void;
    readonly size: number;
  }
  interface Expiring {
    sweep(now?: number): number;
  }

  class TtlCache<K, V> implements Store<K, V>, Expiring {
    private entries = new Map<K, { value: V; expires: number }>();
    constructor(private_ttl: number) {
      this.ttl = private_ttl;
    }
    private readonly ttl: number;

    get size(): number {
      return this.entries.size;
    }
    get(key: K): V | undefined {
      const e = this.entries.get(key);
      return e && e.expires > Date.now() ? e.value : undefined;
    }
    set(key: K, value: V): void {
      this.entries.set(key, { value, expires: Date.now() + this.ttl });
    }
    sweep(now: number = Date.now()): number {
      let n = 0;
      for (const [k, e] of this.entries) if (e.expires <= now) (this.entries.delete(k), n++);
      return n;
    }
  }

  const cache: Store<string, number> = new TtlCache<string, number>(60_000);
  for (const pkg of ['react', 'vue', 'svelte']) {
    const info = await codemode.npm_view({ name: pkg });
    cache.set(pkg, info.versions.length);
  }
  return { size: cache.size, react: cache.get('react') };
}
