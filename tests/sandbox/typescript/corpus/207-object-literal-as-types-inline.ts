async () => {
  const payload = {
    title: 'Weekly metrics' as string,
    sections: [] as { heading: string; lines: string[] }[],
    meta: { generatedAt: new Date().toISOString(), version: 2 as const },
    tags: <string[]>['weekly', 'metrics'],
  };
  const kpis: Record<string, number> = await codemode.analytics_kpis({ range: '7d' });
  payload.sections.push({ heading: 'KPIs', lines: Object.entries(kpis).map(([k, v]) => `${k}: ${v}`) });
  return codemode.docs_create({ doc: payload });
}
