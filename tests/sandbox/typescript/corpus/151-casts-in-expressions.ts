async () => {
  const raw = await codemode.kv_get({ key: 'numbers' });
  const nums = [raw.a as number, raw.b as number, <number>raw.c];
  const neg = -(raw.d as number);
  const not = !(raw.flag as boolean);
  const kind = typeof (raw.x as unknown);
  void (raw.y as never);
  const awaited = await (codemode.kv_get({ key: 'other' }) as Promise<{ v: number }>);
  const spread = [...(raw.list as number[]), ...(<number[]>raw.more)];
  const obj = { ...(raw.meta as object), n: nums.length };
  const call = (raw.fn as (x: number) => number)?.(2);
  const idx = (raw.map as Record<string, number>)['k'];
  const tern = (raw.ok as boolean) ? (raw.v as string) : (raw.w as string);
  const inc = ((raw.counter as number) += 1);
  return { nums, neg, not, kind, awaited: awaited.v, spread, obj, call, idx, tern, inc };
}
