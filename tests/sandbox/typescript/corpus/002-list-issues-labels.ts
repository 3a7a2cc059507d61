async () => {
  type Label = { name: string; color?: string };
  type Issue = { number: number; title: string; labels: Label[]; state: 'open' | 'closed' };

  const issues = (await codemode.github_list_issues({ repo: 'acme/widgets', state: 'open' })) as Issue[];
  const bugs = issues.filter((i) => i.labels.some((l) => l.name === 'bug'));
  return bugs.map((i): string => `#${i.number} ${i.title}`).join('\n');
}
