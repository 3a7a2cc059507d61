async () => {
  class Query {
    private parts: string[] = [];

    where(column: string, value: string | number): this;
    where(clause: Record<string, string | number>): this;
    where(a: string | Record<string, string | number>, b?: string | number): this {
      if (typeof a === 'string') this.parts.push(`${a} = ${JSON.stringify(b)}`);
      else for (const [k, v] of Object.entries(a)) this.parts.push(`${k} = ${JSON.stringify(v)}`);
      return this;
    }

    toString(): string
    toString(pretty: boolean): string
    toString(pretty?: boolean): string {
      return this.parts.join(pretty ? '\n  AND ' : ' AND ');
    }
  }

  const q = new Query().where('status', 'active').where({ plan: 'pro', seats: 5 });
  return codemode.db_query({ sql: `select id from accounts where ${q}` });
}
