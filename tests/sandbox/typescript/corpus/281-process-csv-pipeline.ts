async () => {
  type Parsed = { ok: true; row: Record<string, string> } | { ok: false; line: number; error: string };
  const text: string = await codemode.fs_read_file({ path: 'import/customers.csv' });
  const [head = '', ...body] = text.split(/\r?\n/).filter(Boolean);
  const cols = head.split(';');
  const parsed: Parsed[] = body.map((line, i): Parsed => {
    const cells = line.split(';');
    return cells.length === cols.length
      ? { ok: true, row: Object.fromEntries(cols.map((c, j) => [c, cells[j]!.trim()])) }
      : { ok: false, line: i + 2, error: `expected ${cols.length} cells, got ${cells.length}` };
  });
  const good = parsed.filter((p): p is Extract<Parsed, { ok: true }> => p.ok);
  const bad = parsed.filter((p): p is Extract<Parsed, { ok: false }> => !p.ok);
  if (good.length) await codemode.crm_bulk_upsert({ records: good.map((g) => g.row) });
  return { imported: good.length, errors: bad.slice(0, 10) };
}
