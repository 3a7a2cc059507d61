async () => {
  const results = await Promise.all(
    ['users', 'orders', 'products'].map(<T extends string>(table: T) =>
      codemode.db_query({ sql: `select count(*) as n from ${table}` }).then((rows: { n: number }[]) => [table, rows[0]!.n] as [T, number]),
    ),
  );
  const largest = results.reduce(<A extends [string, number]>(best: A, cur: A): A => (cur[1] > best[1] ? cur : best));
  return { results: Object.fromEntries(results), largest: largest[0] };
}
