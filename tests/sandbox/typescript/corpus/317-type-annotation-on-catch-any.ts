async () => {
  const out: string[] = [];
  for (const host of ['db-1', 'db-2', 'db-3']) {
    try {
      const r: { lagSeconds: number } = await codemode.db_replication_lag({ host });
      out.push(`${host}: ${r.lagSeconds}s`);
    } catch (e: any) {
      out.push(`${host}: ${e?.code ?? 'ERR'} ${e?.message ?? e}`);
    }
  }
  try {
    await codemode.db_ping({ host: 'primary' });
  } catch {
    out.push('primary unreachable');
  }
  return out;
}
