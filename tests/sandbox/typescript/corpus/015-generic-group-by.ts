async () => {
  const groupBy = <T, K extends PropertyKey>(items: readonly T[], key: (item: T) => K): Record<K, T[]> => {
    const out = {} as Record<K, T[]>;
    for (const item of items) {
      (out[key(item)] ??= []).push(item);
    }
    return out;
  };

  type Pr = { number: number; author: string; draft: boolean };
  const prs: Pr[] = await codemode.github_list_pull_requests({ repo: 'acme/api' });
  const grouped = groupBy(prs.filter((p) => !p.draft), (p) => p.author);
  return Object.entries(grouped).map(([author, list]) => ({ author, open: list.length }));
}
