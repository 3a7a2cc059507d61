// refused: enum at 4
async () => {
  const base = 100;
  const enum HttpCode {
    Ok = base + 100,
    NotFound = 404,
  }
  const r = await codemode.http_get({ url: 'https://example.com' });
  return r.status === HttpCode.NotFound;
}
