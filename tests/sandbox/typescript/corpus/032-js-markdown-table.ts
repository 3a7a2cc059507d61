async () => {
  const rows = await codemode.db_query({ sql: 'select name, plan, seats from accounts order by seats desc limit 10' });
  const header = '| name | plan | seats |\n|---|---|---|';
  const body = rows.map((r) => `| ${r.name} | ${r.plan} | ${r.seats} |`).join('\n');
  return `${header}\n${body}`;
}
