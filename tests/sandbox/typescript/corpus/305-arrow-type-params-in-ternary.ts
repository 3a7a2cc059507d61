async () => {
  const strict: boolean = (await codemode.settings_get({ key: 'strict' })).value === true;
  const choose = strict
    ? <T,>(a: T, b: T): T => (a === b ? a : (() => { throw new Error('mismatch'); })())
    : <T,>(a: T, _b: T): T => a;
  const left: string[] = await codemode.kv_get({ key: 'left' });
  const right: string[] = await codemode.kv_get({ key: 'right' });
  return left.map((l, i) => { try { return choose(l, right[i]!); } catch { return null; } });
}
