// Monthly cloud cost report: pull costs per service and per team tag,
// compare with last month and with the budget, flag anomalies, and write a
// markdown summary plus a CSV attachment.
async () => {
  type Month = `${number}-${'01' | '02' | '03' | '04' | '05' | '06' | '07' | '08' | '09' | '10' | '11' | '12'}`;
  type Money = number;

  interface CostLine {
    service: string;
    team?: string | null;
    amount: Money;
    currency: 'USD';
  }
  interface Budget {
    team: string;
    monthly: Money;
    owner: string;
  }
  interface TeamReport {
    team: string;
    current: Money;
    previous: Money;
    budget?: Budget;
    topServices: [service: string, amount: Money][];
    flags: Flag[];
  }
  type Flag =
    | { kind: 'over-budget'; by: Money }
    | { kind: 'spike'; pct: number }
    | { kind: 'untagged'; amount: Money };

  const month = (d: Date): Month => d.toISOString().slice(0, 7) as Month;
  const now = new Date();
  const current: Month = month(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)));
  const previous: Month = month(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1)));

  const usd = (n: Money): string => `$${n.toLocaleString('en-US', { maximumFractionDigits: 0 })}`;
  const pct = (a: Money, b: Money): number => (b === 0 ? (a === 0 ? 0 : Infinity) : ((a - b) / b) * 100);
  const sumBy = <T,>(xs: readonly T[], f: (x: T) => number): number => xs.reduce((s, x) => s + f(x), 0);
  function groupBy<T, K extends string>(xs: readonly T[], key: (x: T) => K): Map<K, T[]> {
    const m = new Map<K, T[]>();
    for (const x of xs) {
      const k = key(x);
      const list = m.get(k);
      if (list) list.push(x);
      else m.set(k, [x]);
    }
    return m;
  }

  const [cur, prev, budgets] = (await Promise.all([
    codemode.cloud_costs({ month: current, group_by: ['service', 'tag:team'] }),
    codemode.cloud_costs({ month: previous, group_by: ['service', 'tag:team'] }),
    codemode.finance_budgets({ year: Number(current.slice(0, 4)) }),
  ])) as [CostLine[], CostLine[], Budget[]];

  const UNTAGGED = '(untagged)' as const;
  const teamOf = (l: CostLine): string => l.team?.trim() || UNTAGGED;
  const curByTeam = groupBy(cur, teamOf);
  const prevByTeam = groupBy(prev, teamOf);
  const budgetByTeam = new Map(budgets.map((b) => [b.team, b] as const));

  const reports: TeamReport[] = [...curByTeam.entries()].map(([team, lines]): TeamReport => {
    const currentTotal = sumBy(lines, (l) => l.amount);
    const previousTotal = sumBy(prevByTeam.get(team) ?? [], (l) => l.amount);
    const budget = budgetByTeam.get(team);
    const services = [...groupBy(lines, (l) => l.service).entries()]
      .map(([s, ls]): [string, Money] => [s, sumBy(ls, (l) => l.amount)])
      .sort((a, b) => b[1] - a[1]);
    const flags: Flag[] = [];
    if (budget && currentTotal > budget.monthly) flags.push({ kind: 'over-budget', by: currentTotal - budget.monthly });
    const change = pct(currentTotal, previousTotal);
    if (previousTotal > 100 && change > 25) flags.push({ kind: 'spike', pct: Math.round(change) });
    if (team === UNTAGGED) flags.push({ kind: 'untagged', amount: currentTotal });
    return { team, current: currentTotal, previous: previousTotal, budget, topServices: services.slice(0, 3), flags };
  });
  reports.sort((a, b) => b.current - a.current);

  const describeFlag = (f: Flag): string => {
    switch (f.kind) {
      case 'over-budget':
        return `over budget by ${usd(f.by)}`;
      case 'spike':
        return `up ${f.pct}% month over month`;
      case 'untagged':
        return `${usd(f.amount)} without a team tag`;
    }
  };

  const total = sumBy(reports, (r) => r.current);
  const totalPrev = sumBy(reports, (r) => r.previous);
  const md: string[] = [
    `# Cloud costs ${current}`,
    '',
    `Total: **${usd(total)}** (${totalPrev ? `${pct(total, totalPrev) >= 0 ? '+' : ''}${pct(total, totalPrev).toFixed(1)}%` : 'n/a'} vs ${previous})`,
    '',
    '| team | cost | last month | budget | top services | flags |',
    '|---|--:|--:|--:|---|---|',
    ...reports.map(
      (r) =>
        `| ${r.team} | ${usd(r.current)} | ${usd(r.previous)} | ${r.budget ? usd(r.budget.monthly) : '—'} | ${r.topServices
          .map(([s, a]) => `${s} ${usd(a)}`)
          .join(', ')} | ${r.flags.map(describeFlag).join('; ') || '—'} |`,
    ),
  ];
  const csv = [
    'team,service,amount',
    ...cur.map((l) => [teamOf(l), l.service, l.amount.toFixed(2)].map((c) => (/[,"]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',')),
  ].join('\n');

  const doc = await codemode.docs_create({
    title: `Cloud costs ${current}`,
    markdown: md.join('\n'),
    attachments: [{ name: `costs-${current}.csv`, content: csv, type: 'text/csv' }],
  });
  const owners = reports.filter((r) => r.flags.length && r.budget).map((r) => r.budget!.owner);
  for (const owner of new Set(owners)) {
    await codemode.email_send({ to: owner, subject: `Cloud cost flags for ${current}`, body: `See ${doc.url}` });
  }
  return { url: doc.url as string, total: usd(total), flagged: reports.filter((r) => r.flags.length).map((r) => r.team) };
}
