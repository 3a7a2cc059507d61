const MAX_PAGES: number = 5;
async function* pages<T>(tool: (input: { page: number }) => Promise<T[]>): AsyncGenerator<T[]> {
  for (let page = 1; page <= MAX_PAGES; page++) {
    const items = await tool({ page });
    if (!items.length) return;
    yield items;
  }
}
async (): Promise<number> => {
  let n = 0;
  for await (const batch of pages<{ id: number }>((i) => codemode.tickets_list({ ...i, status: 'open' }))) n += batch.length;
  return n;
}
