async () => {
  async function exportReport(
    name: string,
    rows: ReadonlyArray<Record<string, string | number>>,
    format: 'csv' | 'json' = 'csv',
    options: { delimiter?: string; header?: boolean } = { delimiter: ',', header: true },
  ): Promise<{ path: string; bytes: number }> {
    const cols = Object.keys(rows[0] ?? {});
    const body =
      format === 'json'
        ? JSON.stringify(rows, null, 2)
        : [
            ...(options.header ? [cols.join(options.delimiter)] : []),
            ...rows.map((r) => cols.map((c) => String(r[c] ?? '')).join(options.delimiter)),
          ].join('\n');
    const path = `/tmp/${name}.${format}`;
    await codemode.fs_write_file({ path, content: body });
    return { path, bytes: body.length };
  }

  const rows = await codemode.db_query({ sql: 'select country, count(*) as users from users group by 1' });
  return exportReport('users-by-country', rows);
}
