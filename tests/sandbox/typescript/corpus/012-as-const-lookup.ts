async () => {
  const PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;
  type Priority = (typeof PRIORITIES)[number];

  const tickets = await codemode.jira_search({ jql: 'project = OPS AND status != Done' });
  const rank = (p: Priority): number => PRIORITIES.indexOf(p);
  const sorted = [...tickets.issues].sort(
    (a: { fields: { priority: Priority } }, b: { fields: { priority: Priority } }) =>
      rank(b.fields.priority) - rank(a.fields.priority),
  );
  return sorted.slice(0, 5).map((t: any) => t.key);
}
