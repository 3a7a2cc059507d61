async () => {
  const identity = <T,>(x: T) => x;
  const first = <T,>(xs: readonly T[]): T | undefined => xs[0];
  const zip = <A, B>(as: A[], bs: B[]): [A, B][] => as.map((a, i) => [a, bs[i]]);

  const names: string[] = await codemode.team_members({ team: 'platform' });
  const emails: string[] = names.map((n) => `${n.toLowerCase()}@example.com`);
  return { first: identity(first(names)), pairs: zip(names, emails).slice(0, 3) };
}
