async () => {
  type Kv = {
    get(key: string): Promise<string | null>;
    get<T>(key: string, parse: (s: string) => T): Promise<T | null>;
    set(key: string, value: string, ttlSeconds?: number): Promise<void>;
  };
  const kv: Kv = {
    async get(key: string, parse?: (s: string) => unknown) {
      const v: string | null = (await codemode.kv_get({ key })) ?? null;
      return v === null ? null : parse ? parse(v) : v;
    },
    async set(key, value, ttlSeconds) {
      await codemode.kv_set({ key, value, ttl: ttlSeconds });
    },
  } as Kv;
  await kv.set('visits', '41');
  const n = await kv.get('visits', Number);
  await kv.set('visits', String((n ?? 0) + 1), 3600);
  return kv.get('visits');
}
