async () => {
  interface Migration { id: number; name: string; applied_at: string | null }
  const applied: Migration[] = await codemode.db_query({ sql: 'select id, name, applied_at from schema_migrations order by id' });
  const files: string[] = await codemode.fs_list_dir({ path: 'migrations' });
  const onDisk = files
    .map((f) => /^(\d+)_(.+)\.sql$/.exec(f))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => ({ id: Number(m[1]), name: m[2]! }));
  const appliedIds = new Set(applied.filter((m) => m.applied_at).map((m) => m.id));
  const pending = onDisk.filter((m) => !appliedIds.has(m.id));
  const unknown = applied.filter((m) => !onDisk.some((d) => d.id === m.id));
  return { pending: pending.map((m) => `${m.id}_${m.name}`), unknown: unknown.map((m) => m.name) };
}
