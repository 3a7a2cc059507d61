async function* pages(repo) {
  let page = 1;
  while (true) {
    const items = await codemode.github_list_issues({ repo, state: 'closed', page, per_page: 100 });
    if (!items.length) return;
    yield* items;
    page++;
  }
}

let closedLastMonth = 0;
const cutoff = Date.now() - 30 * 864e5;
for await (const issue of pages('acme/api')) {
  if (Date.parse(issue.closed_at) < cutoff) break;
  closedLastMonth++;
}
return closedLastMonth;
