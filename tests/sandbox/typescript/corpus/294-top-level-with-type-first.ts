type Repo = { full_name: string; archived: boolean; pushed_at: string };
const repos: Repo[] = await codemode.github_list_org_repos({ org: 'acme', per_page: 100 });
const abandoned = repos.filter((r) => !r.archived && Date.now() - Date.parse(r.pushed_at) > 2 * 365 * 864e5);
abandoned.map((r) => r.full_name);
