// Repository health audit across an organisation: for every active
// repository, gather branch protection, CI state, open PR/issue ages,
// dependency freshness, CODEOWNERS and security alerts; score each
// repository; write a report and open issues for the worst offenders.
// A deliberately long snippet, as a model writes when asked for "a full
// audit" in one go.
async () => {
  // ------------------------------------------------------------------ types
  type Iso = string;
  type RepoName = `${string}/${string}`;
  type Severity = 'info' | 'low' | 'medium' | 'high' | 'critical';
  type CheckId =
    | 'branch-protection'
    | 'required-reviews'
    | 'ci-green'
    | 'stale-prs'
    | 'stale-issues'
    | 'codeowners'
    | 'security-alerts'
    | 'dependency-freshness'
    | 'license'
    | 'readme';

  interface Repo {
    name: string;
    full_name: RepoName;
    archived: boolean;
    fork: boolean;
    default_branch: string;
    pushed_at: Iso;
    language?: string | null;
    license?: { spdx_id: string } | null;
    topics?: string[];
  }

  interface Protection {
    required_pull_request_reviews?: { required_approving_review_count: number; require_code_owner_reviews?: boolean } | null;
    required_status_checks?: { strict: boolean; contexts: string[] } | null;
    enforce_admins?: { enabled: boolean };
  }

  interface CheckRun {
    name: string;
    status: 'queued' | 'in_progress' | 'completed';
    conclusion?: 'success' | 'failure' | 'neutral' | 'cancelled' | 'skipped' | 'timed_out' | null;
  }

  interface PullRequest { number: number; created_at: Iso; draft: boolean; title: string }
  interface Issue { number: number; created_at: Iso; updated_at: Iso; pull_request?: unknown; labels: { name: string }[] }
  interface Alert { number: number; state: 'open' | 'fixed' | 'dismissed'; security_advisory: { severity: Severity; summary: string } }

  interface Finding {
    check: CheckId;
    severity: Severity;
    message: string;
  }

  interface RepoReport {
    repo: RepoName;
    score: number;
    findings: Finding[];
    language: string;
    lastPush: Iso;
  }

  type Weights = { readonly [S in Severity]: number };

  // ------------------------------------------------------------- settings
  const ORG = 'acme';
  const STALE_PR_DAYS = 21;
  const STALE_ISSUE_DAYS = 180;
  const ACTIVE_WITHIN_DAYS = 365;
  const CONCURRENCY = 4;
  const WEIGHTS: Weights = { info: 0, low: 1, medium: 3, high: 7, critical: 15 };
  const ALLOWED_LICENSES: ReadonlySet<string> = new Set(['MIT', 'Apache-2.0', 'BSD-3-Clause', 'ISC']);

  // -------------------------------------------------------------- helpers
  const days = (iso: Iso): number => (Date.now() - Date.parse(iso)) / 86_400_000;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const bySeverity = (a: Finding, b: Finding): number => WEIGHTS[b.severity] - WEIGHTS[a.severity];

  async function safely<T>(what: string, fn: () => Promise<T>, fallback: T): Promise<T> {
    try {
      return await fn();
    } catch (e: unknown) {
      console.log(`! ${what}: ${e instanceof Error ? e.message : String(e)}`);
      return fallback;
    }
  }

  async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
    const results = new Array<R>(items.length);
    let next = 0;
    const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i]!, i);
      }
    });
    await Promise.all(workers);
    return results;
  }

  async function listAll<T>(tool: string, input: Record<string, unknown>, max = 500): Promise<T[]> {
    const out: T[] = [];
    for (let page = 1; out.length < max; page++) {
      const batch = (await (codemode as Record<string, (i: object) => Promise<T[]>>)[tool]!({ ...input, page, per_page: 100 })) ?? [];
      out.push(...batch);
      if (batch.length < 100) break;
    }
    return out;
  }

  // --------------------------------------------------------------- checks
  type Check = (repo: Repo) => Promise<Finding[]>;

  const checks: Record<CheckId, Check> = {
    'branch-protection': async (repo) => {
      const p = await safely<Protection | null>('protection', () => codemode.github_branch_protection({ repo: repo.full_name, branch: repo.default_branch }), null);
      if (!p) return [{ check: 'branch-protection', severity: 'high', message: `${repo.default_branch} is not protected` }];
      const f: Finding[] = [];
      if (!p.required_status_checks?.contexts.length) f.push({ check: 'branch-protection', severity: 'medium', message: 'no required status checks' });
      if (!p.enforce_admins?.enabled) f.push({ check: 'branch-protection', severity: 'low', message: 'admins can bypass protection' });
      return f;
    },
    'required-reviews': async (repo) => {
      const p = await safely<Protection | null>('protection', () => codemode.github_branch_protection({ repo: repo.full_name, branch: repo.default_branch }), null);
      const n = p?.required_pull_request_reviews?.required_approving_review_count ?? 0;
      return n >= 1 ? [] : [{ check: 'required-reviews', severity: 'high', message: 'no required approving reviews' }];
    },
    'ci-green': async (repo) => {
      const runs = await safely<CheckRun[]>('checks', () => codemode.github_check_runs({ repo: repo.full_name, ref: repo.default_branch }), []);
      const failed = runs.filter((r) => r.status === 'completed' && (r.conclusion === 'failure' || r.conclusion === 'timed_out'));
      if (!runs.length) return [{ check: 'ci-green', severity: 'medium', message: 'no CI runs on the default branch' }];
      return failed.length ? [{ check: 'ci-green', severity: 'high', message: `failing: ${failed.map((r) => r.name).join(', ')}` }] : [];
    },
    'stale-prs': async (repo) => {
      const prs = await listAll<PullRequest>('github_list_pull_requests', { repo: repo.full_name, state: 'open' }, 200);
      const stale = prs.filter((p) => !p.draft && days(p.created_at) > STALE_PR_DAYS);
      return stale.length ? [{ check: 'stale-prs', severity: stale.length > 10 ? 'medium' : 'low', message: `${plural(stale.length, 'pull request')} older than ${STALE_PR_DAYS} days` }] : [];
    },
    'stale-issues': async (repo) => {
      const issues = (await listAll<Issue>('github_list_issues', { repo: repo.full_name, state: 'open' }, 500)).filter((i) => !i.pull_request);
      const stale = issues.filter((i) => days(i.updated_at) > STALE_ISSUE_DAYS && !i.labels.some((l) => l.name === 'pinned'));
      return stale.length > 20 ? [{ check: 'stale-issues', severity: 'low', message: `${plural(stale.length, 'issue')} untouched for ${STALE_ISSUE_DAYS}+ days` }] : [];
    },
    codeowners: async (repo) => {
      const paths = ['CODEOWNERS', '.github/CODEOWNERS', 'docs/CODEOWNERS'] as const;
      for (const path of paths) {
        const found = await safely('codeowners', () => codemode.github_get_content({ repo: repo.full_name, path }).then(() => true), false);
        if (found) return [];
      }
      return [{ check: 'codeowners', severity: 'medium', message: 'no CODEOWNERS file' }];
    },
    'security-alerts': async (repo) => {
      const alerts = await safely<Alert[]>('alerts', () => codemode.github_dependabot_alerts({ repo: repo.full_name, state: 'open' }), []);
      return alerts.map((a): Finding => ({ check: 'security-alerts', severity: a.security_advisory.severity, message: a.security_advisory.summary }));
    },
    'dependency-freshness': async (repo) => {
      if (repo.language !== 'TypeScript' && repo.language !== 'JavaScript') return [];
      const raw = await safely<string | null>('package.json', () => codemode.github_get_file({ repo: repo.full_name, path: 'package.json' }), null);
      if (!raw) return [];
      const pkg = JSON.parse(raw) as { dependencies?: Record<string, string> };
      const deps = Object.entries(pkg.dependencies ?? {});
      const outdated: string[] = [];
      for (const [name, range] of deps.slice(0, 15)) {
        const latest = await safely<string | null>('npm', () => codemode.npm_view({ name }).then((i: { 'dist-tags': { latest: string } }) => i['dist-tags'].latest), null);
        const want = Number(/\d+/.exec(range)?.[0]);
        if (latest && Number(latest.split('.')[0]) > want) outdated.push(`${name} ${range} < ${latest}`);
      }
      return outdated.length ? [{ check: 'dependency-freshness', severity: outdated.length > 5 ? 'medium' : 'low', message: `outdated majors: ${outdated.join('; ')}` }] : [];
    },
    license: async (repo) => {
      const id = repo.license?.spdx_id;
      if (!id || id === 'NOASSERTION') return [{ check: 'license', severity: 'medium', message: 'no license detected' }];
      return ALLOWED_LICENSES.has(id) ? [] : [{ check: 'license', severity: 'low', message: `license ${id} needs review` }];
    },
    readme: async (repo) => {
      const text = await safely<string>('readme', () => codemode.github_get_readme({ repo: repo.full_name }), '');
      if (!text) return [{ check: 'readme', severity: 'low', message: 'no README' }];
      return text.length < 300 ? [{ check: 'readme', severity: 'info', message: 'README is very short' }] : [];
    },
  };

  // ---------------------------------------------------------------- audit
  const repos = (await listAll<Repo>('github_list_org_repos', { org: ORG }, 1000)).filter(
    (r) => !r.archived && !r.fork && days(r.pushed_at) <= ACTIVE_WITHIN_DAYS,
  );

  const reports: RepoReport[] = await mapLimit(repos, CONCURRENCY, async (repo): Promise<RepoReport> => {
    const results = await Promise.all((Object.keys(checks) as CheckId[]).map((id) => checks[id](repo)));
    const findings = results.flat().sort(bySeverity);
    const penalty = findings.reduce((s, f) => s + WEIGHTS[f.severity], 0);
    return {
      repo: repo.full_name,
      score: Math.max(0, 100 - penalty),
      findings,
      language: repo.language ?? 'unknown',
      lastPush: repo.pushed_at,
    };
  });
  reports.sort((a, b) => a.score - b.score);

  // --------------------------------------------------------------- output
  const histogram = reports.reduce<Record<string, number>>((h, r) => {
    const bucket = `${Math.floor(r.score / 10) * 10}`.padStart(3, ' ');
    h[bucket] = (h[bucket] ?? 0) + 1;
    return h;
  }, {});
  const byCheck = new Map<CheckId, number>();
  for (const f of reports.flatMap((r) => r.findings)) byCheck.set(f.check, (byCheck.get(f.check) ?? 0) + 1);

  const md = [
    `# Repository health: ${ORG}`,
    '',
    `${plural(reports.length, 'active repository')} audited on ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '## Score distribution',
    '',
    '```',
    ...Object.entries(histogram)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([bucket, n]) => `${bucket}-${Number(bucket) + 9} ${'▇'.repeat(n)} ${n}`),
    '```',
    '',
    '## Most common findings',
    '',
    ...[...byCheck.entries()].sort((a, b) => b[1] - a[1]).map(([check, n]) => `- \`${check}\`: ${n}`),
    '',
    '## Lowest scores',
    '',
    '| repo | score | language | top findings |',
    '|---|--:|---|---|',
    ...reports.slice(0, 15).map((r) => `| ${r.repo} | ${r.score} | ${r.language} | ${r.findings.slice(0, 3).map((f) => `${f.severity}: ${f.message}`).join('<br>')} |`),
  ].join('\n');

  const page = await codemode.wiki_create_page({ space: 'ENG', title: `Repository health ${ORG}`, body: md });

  const opened: string[] = [];
  for (const r of reports.filter((r) => r.findings.some((f) => f.severity === 'critical' || f.severity === 'high')).slice(0, 5)) {
    const body = [
      `The weekly repository audit found ${plural(r.findings.length, 'problem')} (score ${r.score}/100):`,
      '',
      ...r.findings.map((f) => `- **${f.severity}** \`${f.check}\`: ${f.message}`),
      '',
      `Full report: ${page.url}`,
    ].join('\n');
    const issue = await codemode.github_create_issue({ repo: r.repo, title: 'Repository health: action needed', body, labels: ['health-audit'] });
    opened.push(`${r.repo}#${issue.number}`);
  }

  return {
    audited: reports.length,
    median: reports[Math.floor(reports.length / 2)]?.score ?? null,
    report: page.url as string,
    opened,
  };
}
