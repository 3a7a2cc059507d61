async () => {
  const repo: string = 'acme/api';
  const count = async (state: 'open' | 'closed'): Promise<number> =>
    (await codemode.github_search_issues({ q: `repo:${repo} is:issue is:${state}` })).total_count as number;
  return `${repo}: ${await count('open')} open / ${await count('closed')} closed (${(
    (await count('closed')) / Math.max(1, (await count('open')) + (await count('closed')))
  ).toFixed(2)} closed ratio)`;
}
