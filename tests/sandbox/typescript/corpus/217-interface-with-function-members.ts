async () => {
  interface Hooks<Ctx = { attempt: number }> {
    before?: (ctx: Ctx) => void | Promise<void>;
    after?(ctx: Ctx, result: unknown): void;
    onError: (error: unknown, ctx: Ctx) => 'retry' | 'fail';
    readonly maxAttempts: number;
  }
  async function run<T>(fn: () => Promise<T>, hooks: Hooks): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const ctx = { attempt };
      await hooks.before?.(ctx);
      try {
        const r = await fn();
        hooks.after?.(ctx, r);
        return r;
      } catch (e) {
        if (attempt >= hooks.maxAttempts || hooks.onError(e, ctx) === 'fail') throw e;
      }
    }
  }
  return run(() => codemode.db_query({ sql: 'select now()' }), {
    maxAttempts: 3,
    onError: (e) => (String(e).includes('timeout') ? 'retry' : 'fail'),
  });
}
