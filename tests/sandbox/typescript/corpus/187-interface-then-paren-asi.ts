let total = 0
const issues = await codemode.github_list_issues({ repo: 'acme/web', state: 'open' })
interface Issue { comments: number }
(issues as Issue[]).forEach((i) => { total += i.comments })
type Unused = never
[total].forEach((t) => console.log('comments', t))
return total
