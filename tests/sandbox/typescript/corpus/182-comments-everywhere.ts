/**
 * Count open issues per label.
 * @returns a record label -> count
 */
async (/* no params */): Promise</* result */ Record<string, number>> => {
  // fetch everything open
  const issues /* : Issue[] */ = await codemode.github_list_issues({ repo: 'acme/api', state: 'open' }) as Array<{
    labels: { name: string }[]; // labels
    /* pull requests also show up as issues */
    pull_request?: unknown;
  }>;
  const counts: Record<string, number> = {}; /* accumulator */
  for (const issue of issues) {
    if (issue.pull_request) continue; // skip PRs
    for (const { name } of issue.labels) counts[name] = (counts[name] ?? 0) /* start */ + 1;
  }
  return counts; // done
}
