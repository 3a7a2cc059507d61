async () => {
  type Result<M extends 'one' | 'many'> = M extends 'one' ? string : string[];

  async function lookup<M extends 'one' | 'many'>(mode: M, q: string): Promise<Result<M>> {
    const hits: string[] = (await codemode.search_docs({ q })).hits.map((h: { title: string }) => h.title);
    return (mode === 'one' ? hits[0] ?? '' : hits) as Result<M>;
  }

  const best = await lookup('one', 'rate limits');
  const all = await lookup('many', 'rate limits');
  return { best, count: all.length };
}
