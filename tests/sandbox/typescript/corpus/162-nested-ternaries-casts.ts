async () => {
  const r = await codemode.http_get({ url: 'https://api.example.com/quota' });
  const used = (r.body ? (JSON.parse(r.body) as { used: number }).used : 0) as number;
  const limit = r.headers['x-limit'] ? Number(r.headers['x-limit'] as string) : (1000 as const);
  const state =
    used / limit > 0.9
      ? ('critical' as const)
      : used / limit > 0.7
        ? ('warning' as const)
        : ('ok' as const);
  return { used, limit, state } as { used: number; limit: number; state: 'ok' | 'warning' | 'critical' };
}
