async () => {
  function combine<A, B, C = A & B>(a: A, b: B): C {
    return { ...a, ...b } as unknown as C;
  }
  const merged = combine<
    { id: string },
    { name: string },
    { id: string; name: string }
  >({ id: 'u1' }, { name: 'Ada' });
  const lookup = new Map<
    string, // key
    { score: number } // value
  >();
  lookup.set(merged.id, { score: (await codemode.scores_get({ user: merged.id })).score });
  return { merged, score: lookup.get('u1')?.score };
}
