async () => {
  const dirs: string[] = await codemode.fs_list_dir({ path: 'services' });
  const report: string[] = [];
  for (const dir of dirs) {
    type Manifest = { name: string; owners?: string[]; tier?: 1 | 2 | 3 };
    interface Check { ok: boolean; reason?: string }
    const manifest = JSON.parse(await codemode.fs_read_file({ path: `services/${dir}/service.json` })) as Manifest;
    const check: Check = manifest.owners?.length ? { ok: true } : { ok: false, reason: 'no owners' };
    if (!check.ok) report.push(`${manifest.name}: ${check.reason}`);
    if (manifest.tier === 1) {
      type Tier1 = Required<Manifest>;
      const t1 = manifest as Tier1;
      report.push(`${t1.name} is tier 1 with ${t1.owners.length} owner(s)`);
    }
  }
  return report;
}
