async () => {
  const repo: string = 'acme/api'
  const since: Date = new Date(Date.now() - 7 * 864e5)
  type Commit = { sha: string, author: { login: string } | null }
  const commits: Commit[] = await codemode.github_list_commits({ repo, since: since.toISOString() })
  const authors = new Set<string>()
  for (const c of commits) if (c.author) authors.add(c.author.login)
  interface Out { commits: number, authors: string[] }
  const out: Out = { commits: commits.length, authors: [...authors].sort() }
  return out
}
