// refused: enum at 2
enum Status { Open, Closed }
const issues = await codemode.github_list_issues({ repo: 'acme/api' });
return issues.filter((i: { state: string }) => i.state === (Status.Open === 0 ? 'open' : 'closed')).length;
