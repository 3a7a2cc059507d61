// Build an incident timeline from several tools: pager alerts, deploys,
// Slack messages in the incident channel and the status page, then post a
// draft postmortem to the wiki. Larger than most snippets on purpose.
async () => {
  // ---- types -------------------------------------------------------------
  type Iso = string;
  type Source = 'pager' | 'deploy' | 'slack' | 'statuspage' | 'note';

  interface TimelineEntry {
    at: Iso;
    source: Source;
    text: string;
    actor?: string;
    /** entries with the same key are merged */
    key?: string;
  }

  interface PagerAlert {
    id: string;
    created_at: Iso;
    resolved_at?: Iso | null;
    summary: string;
    assignee?: { name: string } | null;
    urgency: 'high' | 'low';
  }

  interface DeployRecord {
    id: number;
    service: string;
    version: string;
    started: Iso;
    finished?: Iso;
    author: string;
    rolledBack?: boolean;
  }

  interface SlackMessage {
    ts: string;
    user?: string;
    text: string;
    subtype?: 'channel_join' | 'bot_message' | string;
  }

  interface StatusUpdate {
    created_at: Iso;
    status: 'investigating' | 'identified' | 'monitoring' | 'resolved';
    body: string;
  }

  type Phase = StatusUpdate['status'] | 'detected';
  type PhaseTimes = Partial<Record<Phase, Iso>>;

  // ---- helpers -----------------------------------------------------------
  const minutes = (a: Iso, b: Iso): number => Math.round((Date.parse(b) - Date.parse(a)) / 60_000);
  const fromSlackTs = (ts: string): Iso => new Date(Number(ts.split('.')[0]) * 1000).toISOString();
  const clip = (s: string, n: number = 140): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
  const unique = <T, K>(xs: T[], key: (x: T) => K): T[] => {
    const seen = new Set<K>();
    return xs.filter((x) => (seen.has(key(x)) ? false : (seen.add(key(x)), true)));
  };

  function mergeTimeline(...lists: TimelineEntry[][]): TimelineEntry[] {
    const all = lists.flat().sort((a, b) => a.at.localeCompare(b.at));
    return unique(all, (e) => e.key ?? `${e.source}:${e.at}:${e.text}`);
  }

  // ---- inputs ------------------------------------------------------------
  const incident: { id: string; channel: string; service: string; window: [from: Iso, to: Iso] } =
    await codemode.incident_get({ id: 'INC-2291' });
  const [from, to] = incident.window;

  const [alerts, deploys, messages, updates] = (await Promise.all([
    codemode.pager_list_alerts({ service: incident.service, since: from, until: to }),
    codemode.deploy_history({ service: incident.service, since: from, until: to }),
    codemode.slack_history({ channel: incident.channel, oldest: Date.parse(from) / 1000, latest: Date.parse(to) / 1000 }),
    codemode.statuspage_updates({ incident: incident.id }),
  ])) as [PagerAlert[], DeployRecord[], SlackMessage[], StatusUpdate[]];

  // ---- timeline ----------------------------------------------------------
  const fromAlerts: TimelineEntry[] = alerts.map((a) => ({
    at: a.created_at,
    source: 'pager',
    text: `${a.urgency === 'high' ? '🔴' : '🟡'} ${a.summary}`,
    actor: a.assignee?.name,
    key: `alert:${a.id}`,
  }));
  const fromDeploys: TimelineEntry[] = deploys.flatMap((d): TimelineEntry[] => [
    { at: d.started, source: 'deploy', text: `deploy ${d.version} started`, actor: d.author, key: `deploy:${d.id}:start` },
    ...(d.finished
      ? [{ at: d.finished, source: 'deploy' as const, text: `deploy ${d.version} ${d.rolledBack ? 'rolled back' : 'finished'}`, actor: d.author }]
      : []),
  ]);
  const fromSlack: TimelineEntry[] = messages
    .filter((m) => !m.subtype || m.subtype === 'bot_message')
    .filter((m) => /\b(deploy|rollback|root cause|mitigat|resolved|paged)\w*/i.test(m.text))
    .map((m) => ({ at: fromSlackTs(m.ts), source: 'slack', text: clip(m.text), actor: m.user }));
  const fromStatus: TimelineEntry[] = updates.map((u) => ({ at: u.created_at, source: 'statuspage', text: `[${u.status}] ${clip(u.body)}` }));

  const timeline = mergeTimeline(fromAlerts, fromDeploys, fromSlack, fromStatus);

  // ---- phases and metrics ------------------------------------------------
  const phases: PhaseTimes = { detected: fromAlerts[0]?.at };
  for (const u of [...updates].sort((a, b) => a.created_at.localeCompare(b.created_at))) {
    phases[u.status] ??= u.created_at;
  }
  const metrics = {
    timeToIdentify: phases.detected && phases.identified ? minutes(phases.detected, phases.identified) : null,
    timeToResolve: phases.detected && phases.resolved ? minutes(phases.detected, phases.resolved) : null,
    deploysDuring: deploys.length,
    rollbacks: deploys.filter((d) => d.rolledBack).length,
    pages: alerts.filter((a) => a.urgency === 'high').length,
  } satisfies Record<string, number | null>;

  const suspects = deploys
    .filter((d) => phases.detected !== undefined && Date.parse(d.started) <= Date.parse(phases.detected!))
    .sort((a, b) => b.started.localeCompare(a.started))
    .slice(0, 2)
    .map((d) => `${d.service}@${d.version} by ${d.author}`);

  // ---- output ------------------------------------------------------------
  const icon: { [S in Source]: string } = { pager: '📟', deploy: '🚀', slack: '💬', statuspage: '📣', note: '📝' };
  const lines: string[] = [
    `# Postmortem draft: ${incident.id} (${incident.service})`,
    '',
    '## Summary',
    '',
    `- Time to identify: ${metrics.timeToIdentify ?? 'n/a'} min`,
    `- Time to resolve: ${metrics.timeToResolve ?? 'n/a'} min`,
    `- Pages: ${metrics.pages}, deploys during the window: ${metrics.deploysDuring} (rollbacks: ${metrics.rollbacks})`,
    `- Suspected changes: ${suspects.length ? suspects.join('; ') : 'none found'}`,
    '',
    '## Timeline (UTC)',
    '',
    ...timeline.map((e) => `- ${e.at.slice(11, 16)} ${icon[e.source]} ${e.text}${e.actor ? ` (${e.actor})` : ''}`),
    '',
    '## Action items',
    '',
    '- [ ] _to be filled in during the review_',
  ];

  const page = await codemode.wiki_create_page({
    space: 'SRE',
    title: `Postmortem ${incident.id}`,
    body: lines.join('\n'),
    labels: ['postmortem', incident.service] as string[],
  });
  return { url: page.url as string, entries: timeline.length, metrics };
}
