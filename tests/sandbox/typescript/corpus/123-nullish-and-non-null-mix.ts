async () => {
  const cfg = await codemode.kv_get({ key: 'deploy-config' });
  const replicas: number = cfg?.replicas ?? 1;
  const image = cfg!.image!;
  const env = (cfg.env as Record<string, string> | undefined)!;
  const port = Number(env!['PORT'] ?? '8080');
  const first = cfg.hosts?.[0]!;
  const fn = cfg.hooks?.pre!;
  const called = fn?.();
  const nested = cfg!.a!.b!.c!;
  return { replicas, image, port, first, called, nested };
}
