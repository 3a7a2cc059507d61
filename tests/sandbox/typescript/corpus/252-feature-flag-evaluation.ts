async () => {
  interface Flag {
    key: string;
    enabled: boolean;
    rollout?: number; // 0..100
    allow?: readonly string[];
  }
  const hash = (s: string): number => [...s].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % 100;
  const evaluate = (flag: Flag, user: string): boolean =>
    flag.enabled && (flag.allow?.includes(user) || hash(`${flag.key}:${user}`) < (flag.rollout ?? 100));

  const [flags, users]: [Flag[], string[]] = await Promise.all([
    codemode.flags_list({ project: 'web' }),
    codemode.users_sample({ n: 200 }),
  ]);
  return Object.fromEntries(flags.map((f) => [f.key, users.filter((u) => evaluate(f, u)).length / users.length]));
}
