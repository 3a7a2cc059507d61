async () => {
  /** Look up by numeric id. */
  function find(id: number): Promise<{ id: number; name: string } | null>;
  /** Look up by name. */
  function find(name: string): Promise<{ id: number; name: string } | null>; // trailing
  // implementation
  async function find(key: number | string) {
    const rows = await codemode.db_query({
      sql: typeof key === 'number' ? 'select id, name from teams where id = $1' : 'select id, name from teams where name = $1',
      params: [key],
    });
    return rows[0] ?? null;
  }
  return [await find(7), await find('platform')];
}
