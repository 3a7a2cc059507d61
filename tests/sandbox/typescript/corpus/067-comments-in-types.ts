async () => {
  type Level = /* from syslog */ 'debug' | 'info' // chatty
    | 'warn' /* needs attention */
    | 'error'; // pages someone

  interface Entry {
    // when it happened, ms since epoch
    at: number; /* trailing */
    level: Level /* no semicolon here */
    msg: string;
  }

  const entries: Entry[] /* parsed */ = await codemode.logs_search({ query: 'service:api', limit: 200 });
  const errors = entries.filter((e /* : Entry */): boolean => e.level === 'error');
  return /* count */ errors.length;
}
