async () => {
  function assert(condition: unknown, message?: string): asserts condition {
    if (!condition) throw new Error(message ?? 'assertion failed');
  }
  function assertString(x: unknown, name: string): asserts x is string {
    if (typeof x !== 'string') throw new TypeError(`${name} must be a string`);
  }

  const resp = await codemode.http_get({ url: 'https://api.example.com/me' });
  assert(resp.status === 200, `status ${resp.status}`);
  const body: unknown = JSON.parse(resp.body);
  assert(body && typeof body === 'object');
  const login = (body as Record<string, unknown>).login;
  assertString(login, 'login');
  return login.toUpperCase();
}
