async () => {
  function cast<T>(v: unknown): T {
    return v as T;
  }
  const x = 5, y = 10, z = 2;
  const compare = x < y && y > z;
  const generic = cast<number>(x) + cast<number>(z);
  const arr = Array<number>(3).fill(0);
  const nested = cast<Array<Map<string, number>>>([new Map()]);
  const lt = x < (y as number);
  const list = await codemode.kv_list({ prefix: 'k' });
  return { compare, generic, arr, n: nested.length, lt, list: cast<string[]>(list).length };
}
