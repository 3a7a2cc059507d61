try {
  const result = await codemode.db_query({ sql: 'select count(*) as n from orders where status = $1', params: ['late'] });
  return (result.rows[0] as { n: number }).n;
} catch (err: unknown) {
  const message = err instanceof Error ? err.message : String(err);
  console.error('query failed:', message);
  return -1;
}
