const repos = ['acme/api', 'acme/web', 'acme/cli'];
const out = [];
for (const repo of repos) {
  const runs = await codemode.github_list_workflow_runs({ repo, per_page: 1 });
  const last = runs[0];
  out.push({ repo, conclusion: last ? last.conclusion : 'none' });
}
return out;
