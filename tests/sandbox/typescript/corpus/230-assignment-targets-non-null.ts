async () => {
  const counters = new Map<string, { count: number; last?: string }>();
  const events: { type: string; at: string }[] = await codemode.events_tail({ n: 100 });
  for (const e of events) {
    if (!counters.has(e.type)) counters.set(e.type, { count: 0 });
    counters.get(e.type)!.count += 1;
    counters.get(e.type)!.last = e.at;
  }
  const arr: number[] | undefined = [0, 0];
  arr![0] = counters.size;
  const holder: { v?: number } = {};
  holder!.v = 1;
  (holder as any).extra = true;
  (<any>holder).more = 2;
  let maybe: number | undefined = 1;
  maybe! += 1;
  delete (holder as { extra?: boolean }).extra;
  return { types: [...counters.keys()], arr, holder, maybe };
}
