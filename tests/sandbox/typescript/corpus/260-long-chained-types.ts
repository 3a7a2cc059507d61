async () => {
  const report = await (codemode.reports_generate({ kind: 'sales', period: 'q2' }) as Promise<{ sections: { title: string; rows: [string, number][] }[] }>)
    .then((r) => r.sections)
    .then((sections): { title: string; total: number }[] => sections.map((s) => ({ title: s.title, total: s.rows.reduce((a, [, v]) => a + v, 0) })))
    .catch((e: Error): { title: string; total: number }[] => [{ title: `error: ${e.message}`, total: 0 }]);
  return report;
}
