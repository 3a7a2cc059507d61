export interface Summary {
  name: string;
  open: number;
}

export default async function summarize(repo: string): Promise<Summary> {
  const issues: unknown[] = await codemode.github_list_issues({ repo, state: 'open' });
  return { name: repo, open: issues.length };
}

export const VERSION: string = '1.0.0';
export { type Summary as RepoSummary };
