async () => {
  const handlers: Record<string, (...args: any[]) => unknown> = {
    sum: (...xs: number[]): number => xs.reduce((a, b) => a + b, 0),
    concat: (a: string, b: string = ''): string => a + b,
    pick: ({ a }: { a: unknown }): unknown => a,
    first: ([x]: [unknown, ...unknown[]]): unknown => x,
  };
  const calls: { fn: string; args: unknown[] }[] = await codemode.queue_receive({ queue: 'rpc', max: 10 });
  return calls.map(({ fn, args }) => (handlers[fn] ? handlers[fn]!(...args) : `unknown ${fn}`));
}
