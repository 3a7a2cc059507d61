const memo = <K, V>(fn: (k: K) => Promise<V>): ((k: K) => Promise<V>) => {
  const cache = new Map<K, Promise<V>>();
  return (k) => {
    if (!cache.has(k)) cache.set(k, fn(k));
    return cache.get(k)!;
  };
};

const getUser = memo<string, { login: string; name: string | null }>((login) => codemode.github_get_user({ login }));
const logins: string[] = ['octocat', 'hubot', 'octocat', 'hubot', 'monalisa'];
const users = await Promise.all(logins.map(getUser));
return users.map((u) => u.name ?? u.login);
