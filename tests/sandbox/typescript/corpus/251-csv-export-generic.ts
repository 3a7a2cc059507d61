function toCsv<T extends Record<string, unknown>>(rows: readonly T[], columns: readonly (keyof T & string)[] = Object.keys(rows[0] ?? {}) as (keyof T & string)[]): string {
  const esc = (v: unknown): string => {
    const s = v === null || v === undefined ? '' : String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [columns.join(','), ...rows.map((r) => columns.map((c) => esc(r[c])).join(','))].join('\n');
}

type Signup = { day: string; source: string; count: number };
const signups: Signup[] = await codemode.analytics_signups({ days: 14 });
const csv = toCsv(signups, ['day', 'source', 'count']);
await codemode.fs_write_file({ path: 'signups.csv', content: csv });
return csv.split('\n').length - 1;
