async () => {
  interface Opts { limit?: number; offset?: number; order?: 'asc' | 'desc' }
  function list(table: string, opts?: Opts, signal?: AbortSignal): Promise<unknown[]> {
    return codemode.db_select({ table, ...opts, aborted: signal?.aborted ?? false });
  }
  const fmt = function (n?: number, unit?: string): string {
    return `${n ?? 0}${unit ?? ''}`;
  };
  class Pager {
    next?(page?: number): Promise<unknown[]>;
    size?: number;
    constructor(size?: number) {
      this.size = size;
    }
  }
  const p = new Pager(50);
  const rows = await list('events', { limit: p.size, order: 'desc' });
  return { count: fmt(rows.length, ' rows'), hasNext: typeof p.next };
}
