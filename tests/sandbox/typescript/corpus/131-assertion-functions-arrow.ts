async () => {
  type Assert = (cond: unknown, msg: string) => asserts cond;
  const check: Assert = (cond, msg) => {
    if (!cond) throw new Error(msg);
  };
  function assertIsDefined<T>(v: T, name: string): asserts v is NonNullable<T> {
    check(v !== undefined && v !== null, `${name} is missing`);
  }

  const user = await codemode.auth_whoami({});
  assertIsDefined(user, 'user');
  check(typeof user.email === 'string', 'email is not a string');
  return user.email.split('@')[1];
}
