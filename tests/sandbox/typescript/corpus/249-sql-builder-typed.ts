async () => {
  type Op = '=' | '<>' | '<' | '>' | 'like' | 'in';
  type Where<T> = { [K in keyof T]?: T[K] | [Op, T[K] | T[K][]] };
  interface User { id: number; email: string; plan: string; created_at: string }

  function select<T>(table: string, where: Where<T>, limit = 100): { sql: string; params: unknown[] } {
    const params: unknown[] = [];
    const clauses = (Object.entries(where) as [string, unknown][]).map(([col, cond]) => {
      const [op, value] = Array.isArray(cond) && typeof cond[0] === 'string' && cond.length === 2 ? (cond as [Op, unknown]) : (['=', cond] as [Op, unknown]);
      params.push(value);
      return op === 'in' ? `${col} = any($${params.length})` : `${col} ${op} $${params.length}`;
    });
    return { sql: `select * from ${table}${clauses.length ? ' where ' + clauses.join(' and ') : ''} limit ${limit}`, params };
  }

  const q = select<User>('users', { plan: 'pro', created_at: ['>', '2024-01-01'], email: ['like', '%@example.com'] });
  const rows: User[] = await codemode.db_query(q);
  return { sql: q.sql, count: rows.length };
}
