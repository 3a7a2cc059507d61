async () => {
  type Cell = string | number | boolean | null | undefined;
  type Align = 'left' | 'right' | 'center';
  function table(headers: readonly string[], rows: readonly Cell[][], align: readonly Align[] = []): string {
    const fmt = (c: Cell): string => (c === null || c === undefined ? '' : String(c).replace(/\|/g, '\\|'));
    const sep = headers.map((_, i) => ({ left: ':--', right: '--:', center: ':-:' })[align[i] ?? 'left']);
    return [headers, sep, ...rows.map((r) => r.map(fmt))].map((r) => `| ${r.join(' | ')} |`).join('\n');
  }

  const services: { name: string; uptime: number; incidents: number }[] = await codemode.sre_service_stats({ days: 30 });
  return table(
    ['service', 'uptime %', 'incidents'],
    services.map((s) => [s.name, (s.uptime * 100).toFixed(3), s.incidents]),
    ['left', 'right', 'right'],
  );
}
