async () => {
  const ensureArray = (v: unknown, what: string): asserts v is unknown[] => {
    if (!Array.isArray(v)) throw new TypeError(`${what} must be an array`);
  };
  const ensure: (cond: unknown) => asserts cond = (cond) => {
    if (!cond) throw new Error('ensure failed');
  };
  const data: unknown = await codemode.kv_get({ key: 'backlog' });
  ensure(data !== undefined);
  return typeof data;
}
