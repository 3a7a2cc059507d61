async () => {
  function fail(message: string): never {
    throw new Error(message);
  }
  const parseNumber = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && !isNaN(+v) ? +v : fail(`not a number: ${String(v)}`));
  const cells: unknown[] = await codemode.sheets_read_column({ sheet: 'budget', column: 'C' });
  const nums: number[] = [];
  const bad: string[] = [];
  for (const c of cells) {
    try {
      nums.push(parseNumber(c));
    } catch (e) {
      bad.push((e as Error).message);
    }
  }
  return { total: nums.reduce((a, b) => a + b, 0), bad: bad.length };
}
