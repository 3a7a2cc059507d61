async () => {
  type Label = { name: string; color: string; description?: string | null };
  const wanted: readonly Label[] = [
    { name: 'bug', color: 'd73a4a', description: "Something isn't working" },
    { name: 'enhancement', color: 'a2eeef' },
    { name: 'good first issue', color: '7057ff', description: 'Good for newcomers' },
  ];
  const repos: string[] = ['acme/api', 'acme/web'];
  const log: string[] = [];
  for (const repo of repos) {
    const existing: Label[] = await codemode.github_list_labels({ repo });
    const byName = new Map(existing.map((l) => [l.name.toLowerCase(), l] as const));
    for (const w of wanted) {
      const e = byName.get(w.name);
      if (!e) {
        await codemode.github_create_label({ repo, ...w });
        log.push(`${repo}: created ${w.name}`);
      } else if (e.color !== w.color || (w.description ?? null) !== (e.description ?? null)) {
        await codemode.github_update_label({ repo, name: e.name, color: w.color, description: w.description });
        log.push(`${repo}: updated ${w.name}`);
      }
    }
  }
  return log;
}
