async () => {
  const logger: {
    level: 'debug' | 'info';
    lines: string[];
    log(msg: string, ...rest: unknown[]): void;
    child: (prefix: string) => { log(msg: string): void };
  } = {
    level: 'info',
    lines: [],
    log(msg, ...rest) {
      this.lines.push([msg, ...rest.map((r) => JSON.stringify(r))].join(' '));
    },
    child(prefix) {
      return { log: (msg: string) => logger.log(`[${prefix}] ${msg}`) };
    },
  };
  const db = logger.child('db');
  const rows = await codemode.db_query({ sql: 'select 1 as ok' });
  db.log(`got ${rows.length} row(s)`);
  logger.log('done', { ok: true });
  return logger.lines;
}
