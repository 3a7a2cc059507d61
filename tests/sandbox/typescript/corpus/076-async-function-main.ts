async function main(): Promise<string> {
  const branches: { name: string; protected: boolean }[] = await codemode.github_list_branches({ repo: 'acme/api' });
  const stale: string[] = [];
  for (const b of branches) {
    if (b.protected) continue;
    const last = await codemode.github_get_commit({ repo: 'acme/api', ref: b.name });
    const ageDays: number = (Date.now() - Date.parse(last.commit.author.date)) / 86_400_000;
    if (ageDays > 90) stale.push(`${b.name} (${Math.floor(ageDays)}d)`);
  }
  return stale.length ? `Stale branches:\n${stale.join('\n')}` : 'No stale branches';
}
