async () => {
  type DeepReadonly<T> = T extends (infer E)[]
    ? ReadonlyArray<DeepReadonly<E>>
    : T extends object
      ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
      : T;
  type Config = { servers: { host: string; ports: number[] }[]; tls: { enabled: boolean } };
  const cfg: DeepReadonly<Config> = await codemode.kv_get({ key: 'lb-config' });
  const endpoints = cfg.servers.flatMap((s) => s.ports.map((p) => `${cfg.tls.enabled ? 'https' : 'http'}://${s.host}:${p}`));
  return endpoints;
}
