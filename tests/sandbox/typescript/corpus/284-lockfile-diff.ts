async () => {
  type Lock = { packages: Record<string, { version: string; resolved?: string }> };
  const [before, after] = (await Promise.all([
    codemode.git_show({ ref: 'HEAD~1', path: 'package-lock.json' }),
    codemode.fs_read_file({ path: 'package-lock.json' }),
  ])).map((t: string) => JSON.parse(t) as Lock) as [Lock, Lock];
  const name = (k: string) => k.replace(/^.*node_modules\//, '');
  const changes: { pkg: string; from?: string; to?: string }[] = [];
  const keys = new Set([...Object.keys(before.packages), ...Object.keys(after.packages)]);
  for (const k of keys) {
    if (!k) continue;
    const a = before.packages[k]?.version, b = after.packages[k]?.version;
    if (a !== b) changes.push({ pkg: name(k), from: a, to: b });
  }
  return {
    added: changes.filter((c) => !c.from).length,
    removed: changes.filter((c) => !c.to).length,
    changed: changes.filter((c) => c.from && c.to).map((c) => `${c.pkg} ${c.from} → ${c.to}`),
  };
}
