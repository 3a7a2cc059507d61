export const fetchStars = async (repos: string[]): Promise<Record<string, number>> => {
  const out: Record<string, number> = {};
  for (const r of repos) {
    const [owner, repo] = r.split('/') as [string, string];
    out[r] = (await codemode.github_get_repo({ owner, repo })).stargazers_count;
  }
  return out;
};
export function top(stars: Record<string, number>, n = 3): string[] {
  return Object.entries(stars).sort((a, b) => b[1] - a[1]).slice(0, n).map(([r]) => r);
}
export type Stars = Awaited<ReturnType<typeof fetchStars>>;
