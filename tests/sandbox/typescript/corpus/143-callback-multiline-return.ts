async () => {
  const repos: string[] = ['acme/api', 'acme/web'];
  const results = await Promise.all(
    repos.map(async (repo): Promise<{
      repo: string;
      stars: number;
    }> => {
      const r = await codemode.github_get_repo({ owner: repo.split('/')[0], repo: repo.split('/')[1] });
      return { repo, stars: r.stargazers_count };
    }),
  );
  const sorted = results.sort((a, b): number =>
    b.stars - a.stars);
  return sorted;
}
