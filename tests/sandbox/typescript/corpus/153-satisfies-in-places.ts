async () => {
  type Check = { name: string; run: () => Promise<boolean> };
  const checks = [
    { name: 'dns', run: async () => (await codemode.dns_lookup({ host: 'example.com' })).ok as boolean },
    { name: 'tls', run: async () => (await codemode.tls_check({ host: 'example.com' })).daysLeft > 14 },
  ] satisfies Check[];
  const summary = (await Promise.all(checks.map(async (c) => [c.name, await c.run()] as const))) satisfies ReadonlyArray<
    readonly [string, boolean]
  >;
  const msg = `${summary.filter(([, ok]) => ok).length satisfies number}/${summary.length} checks passed`;
  return { msg, detail: Object.fromEntries(summary) satisfies Record<string, boolean> };
}
