async () => {
  const utils = {
    id: <T,>(x: T): T => x,
    pair: <A, B>(a: A, b: B): [A, B] => [a, b],
    wrap: async <T extends object>(p: Promise<T>): Promise<{ ok: true; value: T }> => ({ ok: true, value: await p }),
  };
  const me = await utils.wrap(codemode.auth_whoami({}) as Promise<{ login: string }>);
  return utils.pair(utils.id(me.value.login), me.ok);
}
