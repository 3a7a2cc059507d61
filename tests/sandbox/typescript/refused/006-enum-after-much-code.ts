// refused: enum at 22
async () => {
  type Row = { id: number; name: string; kind: number };
  const rows: Row[] = await codemode.db_query({ sql: 'select id, name, kind from things' });
  const byKind = new Map<number, Row[]>();
  for (const r of rows) {
    const list = byKind.get(r.kind) ?? [];
    list.push(r);
    byKind.set(r.kind, list);
  }
  function label(k: number): string {
    switch (k) {
      case 0:
        return 'zero';
      case 1:
        return 'one';
      default:
        return 'many';
    }
  }
  const labels = [...byKind.keys()].map(label);
  enum Kind {
    Zero,
    One,
  }
  return { labels, zero: Kind.Zero };
}
