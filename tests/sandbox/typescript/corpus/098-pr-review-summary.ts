// Summarise the open pull requests of a repository for a weekly review:
// size, age, review state and CI state, then a markdown report.
async () => {
  interface PullRequest {
    number: number;
    title: string;
    user: { login: string };
    created_at: string;
    draft: boolean;
    additions: number;
    deletions: number;
    requested_reviewers: { login: string }[];
    head: { sha: string; ref: string };
  }
  interface Review {
    user: { login: string };
    state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED';
    submitted_at: string;
  }
  type CiState = 'success' | 'failure' | 'pending' | 'unknown';
  type Row = {
    pr: PullRequest;
    ageDays: number;
    size: 'XS' | 'S' | 'M' | 'L' | 'XL';
    approvals: number;
    changesRequested: boolean;
    ci: CiState;
  };

  const REPO = 'acme/platform';
  const sizeOf = (lines: number): Row['size'] =>
    lines < 10 ? 'XS' : lines < 100 ? 'S' : lines < 400 ? 'M' : lines < 1000 ? 'L' : 'XL';

  const prs: PullRequest[] = await codemode.github_list_pull_requests({ repo: REPO, state: 'open', per_page: 50 });
  const rows: Row[] = [];
  for (const pr of prs.filter((p) => !p.draft)) {
    const [reviews, status] = await Promise.all([
      codemode.github_list_reviews({ repo: REPO, number: pr.number }) as Promise<Review[]>,
      codemode.github_combined_status({ repo: REPO, ref: pr.head.sha }) as Promise<{ state?: string }>,
    ]);
    // Only the latest review of each reviewer counts.
    const latest = new Map<string, Review>();
    for (const r of [...reviews].sort((a, b) => a.submitted_at.localeCompare(b.submitted_at))) {
      latest.set(r.user.login, r);
    }
    const states = [...latest.values()].map((r) => r.state);
    rows.push({
      pr,
      ageDays: Math.floor((Date.now() - Date.parse(pr.created_at)) / 86_400_000),
      size: sizeOf(pr.additions + pr.deletions),
      approvals: states.filter((s) => s === 'APPROVED').length,
      changesRequested: states.includes('CHANGES_REQUESTED'),
      ci: (['success', 'failure', 'pending'] as const).includes(status.state as any)
        ? (status.state as CiState)
        : 'unknown',
    });
  }

  const needsAttention = rows.filter((r) => r.ageDays > 7 && r.approvals === 0);
  const icon: Record<CiState, string> = { success: '✅', failure: '❌', pending: '⏳', unknown: '❔' };
  const table = [
    '| PR | author | age | size | approvals | CI |',
    '|---|---|---|---|---|---|',
    ...rows
      .sort((a, b) => b.ageDays - a.ageDays)
      .map((r) =>
        `| #${r.pr.number} ${r.pr.title.replace(/\|/g, '\\|')} | ${r.pr.user.login} | ${r.ageDays}d | ${r.size} | ${r.approvals}${r.changesRequested ? ' (changes requested)' : ''} | ${icon[r.ci]} |`,
      ),
  ].join('\n');

  return {
    open: prs.length,
    drafts: prs.filter((p) => p.draft).length,
    needsAttention: needsAttention.map((r) => r.pr.number),
    report: `## Open PRs in ${REPO}\n\n${table}`,
  };
}
