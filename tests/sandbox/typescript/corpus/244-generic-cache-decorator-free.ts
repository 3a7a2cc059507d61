async () => {
  function cached<A extends unknown[], R>(fn: (...args: A) => Promise<R>, key: (...args: A) => string = (...a) => JSON.stringify(a)) {
    const store = new Map<string, Promise<R>>();
    const wrapped = (...args: A): Promise<R> => {
      const k = key(...args);
      let p = store.get(k);
      if (!p) {
        p = fn(...args);
        store.set(k, p);
      }
      return p;
    };
    return Object.assign(wrapped, { clear: (): void => store.clear(), size: (): number => store.size });
  }
  const getUser = cached((login: string) => codemode.github_get_user({ login }) as Promise<{ name: string }>);
  const names = await Promise.all(['a', 'b', 'a'].map((l) => getUser(l).then((u) => u.name)));
  return { names, cached: getUser.size() };
}
