codemode
  .github_list_releases({ repo: 'acme/cli', per_page: 5 })
  .then((releases) => releases.filter((r) => !r.prerelease))
  .then((releases) => releases.map((r) => ({ tag: r.tag_name, date: r.published_at.slice(0, 10) })))
  .catch((e) => ({ error: e.message }))
