async () => {
  interface Page<T = unknown, C extends string | null = string | null> {
    items: T[];
    nextCursor: C;
  }
  async function collect<T = Record<string, unknown>>(
    fetchPage: (cursor: string | null) => Promise<Page<T>>,
    limit = 500,
  ): Promise<T[]> {
    const all: T[] = [];
    let cursor: string | null = null;
    do {
      const page: Page<T> = await fetchPage(cursor);
      all.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor && all.length < limit);
    return all;
  }

  type Ticket = { id: string; subject: string };
  const tickets = await collect<Ticket>((cursor) => codemode.helpdesk_list_tickets({ cursor, status: 'open' }));
  return tickets.length;
}
