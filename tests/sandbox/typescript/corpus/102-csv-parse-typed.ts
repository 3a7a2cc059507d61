const csv: string = await codemode.fs_read_file({ path: 'sales.csv' });
const [headerLine, ...lines] = csv.trim().split(/\r?\n/);
const headers = headerLine!.split(',') as (keyof SaleRow)[];
interface SaleRow { region: string; product: string; units: string; price: string }
const rows: SaleRow[] = lines.map((l) => {
  const cells = l.split(',');
  return Object.fromEntries(headers.map((h, i) => [h, cells[i] ?? ''])) as unknown as SaleRow;
});
const revenue = new Map<string, number>();
for (const r of rows) revenue.set(r.region, (revenue.get(r.region) ?? 0) + Number(r.units) * Number(r.price));
return [...revenue].sort((a, b) => b[1] - a[1]).map(([region, total]) => ({ region, total: Math.round(total) }));
