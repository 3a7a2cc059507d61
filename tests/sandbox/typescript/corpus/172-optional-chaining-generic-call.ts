async () => {
  type Parser = { parse?<T>(text: string): T };
  const parsers: Record<string, Parser | undefined> = { json: { parse: <T,>(t: string) => JSON.parse(t) as T } };
  const text: string = await codemode.fs_read_file({ path: 'data.json' });
  const data = parsers['json']?.parse?.<{ items: unknown[] }>(text);
  const yaml = parsers['yaml']?.parse?.<object>(text) ?? null;
  return { items: data?.items.length ?? 0, yaml };
}
