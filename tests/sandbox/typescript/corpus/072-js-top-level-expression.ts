(await codemode.github_list_issues({ repo: 'acme/web', state: 'open', labels: 'p0' }))
  .map((issue) => ({ n: issue.number, title: issue.title, age: Math.round((Date.now() - Date.parse(issue.created_at)) / 864e5) }))
  .sort((a, b) => b.age - a.age)
