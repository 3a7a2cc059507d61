async () => {
  const store = {
    data: new Map<string, unknown>(),
    get<T>(key: string): T | undefined {
      return this.data.get(key) as T | undefined;
    },
    set<T>(key: string, value: T): T {
      this.data.set(key, value);
      return value;
    },
    async load<T extends object>(key: string, loader: () => Promise<T>): Promise<T> {
      return this.get<T>(key) ?? this.set(key, await loader());
    },
  };

  const user = await store.load('me', () => codemode.auth_whoami({}));
  const again = await store.load('me', () => codemode.auth_whoami({}));
  return user === again;
}
