async () => {
  const toRow = (u: { login: string; id: number }) => ({ user: u.login, id: u.id }) as const;
  const toPair = (u: { login: string }): [string, number] => [u.login, u.login.length];
  const empty = () => ({}) as Record<string, never>;
  const users = await codemode.github_list_collaborators({ repo: 'acme/api' });
  return { rows: users.map(toRow), pairs: users.map(toPair), empty: empty() };
}
