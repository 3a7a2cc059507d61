async () => {
  class Connection {
    protected constructor(protected_url: string) {
      this.url = protected_url;
    }
    protected url: string;
    static async open(url: string): Promise<Connection> {
      await codemode.db_ping({ url });
      return new Connection(url);
    }
    public query<R = unknown>(sql: string, params: unknown[] = []): Promise<R[]> {
      return codemode.db_query({ url: this.url, sql, params });
    }
  }
  const conn = await Connection.open('postgres://reports');
  const rows = await conn.query<{ day: string; signups: number }>('select day, signups from daily_signups order by day desc limit 7');
  return rows.reverse().map((r) => `${r.day}: ${r.signups}`);
}
