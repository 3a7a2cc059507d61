async () => {
  const adder = (x: number): ((y: number) => number) => (y: number): number => x + y;
  const logger =
    (prefix: string): ((msg: string) => void) =>
    (msg) =>
      console.log(`${prefix} ${msg}`);
  const pick =
    <K extends string>(...keys: K[]) =>
    <T extends Record<K, unknown>>(obj: T): Pick<T, K> =>
      Object.fromEntries(keys.map((k) => [k, obj[k]])) as Pick<T, K>;
  const log = logger('[run]');
  const user = await codemode.auth_whoami({});
  log(`hello ${user.login}`);
  return { five: adder(2)(3), picked: pick('login', 'id')(user) };
}
