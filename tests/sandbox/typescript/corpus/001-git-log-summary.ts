async () => {
  interface Commit {
    sha: string;
    author: string;
    date: string;
    message: string;
  }
  const log: Commit[] = await codemode.git_log({ max_count: 20 });
  const byAuthor: Record<string, number> = {};
  for (const c of log) {
    byAuthor[c.author] = (byAuthor[c.author] ?? 0) + 1;
  }
  const top = Object.entries(byAuthor)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([name, n]) => `${name}: ${n}`);
  return { total: log.length, top };
}
