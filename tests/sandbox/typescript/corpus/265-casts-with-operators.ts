async () => {
  const obj: Record<string, unknown> = await codemode.kv_get({ key: 'session' });
  const hasUser = ('user' as string) in obj;
  const isDate = (obj.started as object) instanceof Date;
  const kind = typeof obj.count as string;
  const C = (obj.ctor ?? Object) as new () => object;
  const made = new (C as any)();
  const list = obj.items as any as string[];
  const z = (obj.nested as { z?: number } | undefined)?.z;
  const seq = ((obj.a as number), (obj.b as number));
  return { hasUser, isDate, kind, made: typeof made, list: list?.length, z, seq };
}
