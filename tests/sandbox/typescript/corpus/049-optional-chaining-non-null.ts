async () => {
  const repo = await codemode.github_get_repo({ owner: 'acme', repo: 'api' });
  const license = repo?.license!.spdx_id;
  const owner = repo!.owner?.login!;
  const topics = repo.topics?.slice(0, 3)!.join(', ');
  const firstHook = (await codemode.github_list_hooks({ repo: 'acme/api' }))?.[0]!?.config?.url;
  const size = repo.size! * 1024;
  return { license, owner, topics, firstHook, size };
}
