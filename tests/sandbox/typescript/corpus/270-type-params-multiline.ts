async () => {
  function join<
    L extends Record<string, unknown>,
    R extends Record<string, unknown>,
    K extends keyof L & keyof R = keyof L & keyof R,
  >(left: L[], right: R[], key: K): (L & R)[] {
    const index = new Map(right.map((r) => [r[key], r]));
    return left.flatMap((l) => (index.has(l[key] as R[K]) ? [{ ...l, ...index.get(l[key] as R[K])! }] : []));
  }
  const users: { id: number; name: string }[] = await codemode.db_query({ sql: 'select id, name from users' });
  const plans: { id: number; plan: string }[] = await codemode.billing_plans({});
  return join(users, plans, 'id').slice(0, 5);
}
