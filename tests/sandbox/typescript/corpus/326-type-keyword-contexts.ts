async () => {
  type type = string;
  const t: type = 'x';
  interface is { is: boolean }
  const i: is = { is: true };
  const events: { type: string; payload: unknown }[] = await codemode.events_tail({ n: 20 });
  const byType: Record<type, number> = {};
  for (const { type } of events) byType[type] = (byType[type] ?? 0) + 1;
  const isObject = (x: unknown): x is object => typeof x === 'object';
  return { t, i, byType, objects: events.map((e) => e.payload).filter(isObject).length };
}
