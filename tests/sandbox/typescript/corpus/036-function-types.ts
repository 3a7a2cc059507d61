async () => {
  type Handler<E> = (event: E, ctx: { attempt: number }) => Promise<void> | void;
  type Factory<T> = new (...args: any[]) => T;
  type Middleware = (next: Handler<unknown>) => Handler<unknown>;

  const logging: Middleware = (next) => async (event, ctx) => {
    console.log('event', ctx.attempt, JSON.stringify(event).slice(0, 80));
    await next(event, ctx);
  };

  function make<T>(ctor: Factory<T>, ...args: unknown[]): T {
    return new ctor(...args);
  }

  const seen: unknown[] = [];
  const handler: Handler<unknown> = logging((e) => {
    seen.push(e);
  });
  const events = await codemode.queue_receive({ queue: 'jobs', max: 5 });
  for (const e of events) await handler(e, { attempt: 1 });
  const d = make(Date, 0);
  return { handled: seen.length, epoch: d.getTime() };
}
