async () => {
  function defaults<T extends object = { retries: number; timeout: number }>(partial: Partial<T>, base: T): T {
    return { ...base, ...partial };
  }
  const opts = defaults({ timeout: 2000 }, { retries: 3, timeout: 10_000 });
  const r = await codemode.http_get({ url: 'https://example.com', ...opts });
  return { status: r.status, opts };
}
