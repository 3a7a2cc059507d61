function tuple<const T extends readonly unknown[]>(...items: T): T {
  return items;
}
function keys<const K extends string>(obj: Record<K, unknown>): K[] {
  return Object.keys(obj) as K[];
}

const cols = tuple('id', 'name', 'email');
const rows = await codemode.db_query({ sql: `select ${cols.join(', ')} from users limit 5` });
return { cols, keys: keys(rows[0] ?? {}) };
