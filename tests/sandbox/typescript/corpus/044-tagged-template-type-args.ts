async () => {
  type Row = { id: number; email: string };
  function sql<T>(strings: TemplateStringsArray, ...values: unknown[]): { text: string; values: unknown[]; _row?: T } {
    return { text: strings.reduce((acc, s, i) => acc + '$' + i + s), values };
  }

  const domain = 'example.com';
  const query = sql<Row>`select id, email from users where email like ${'%@' + domain}`;
  const rows: Row[] = await codemode.db_query({ sql: query.text, params: query.values });
  return rows.map((r) => r.email);
}
