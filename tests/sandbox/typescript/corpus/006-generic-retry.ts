async () => {
  async function retry<T>(fn: () => Promise<T>, attempts: number = 3, delayMs = 200): Promise<T> {
    let last: unknown;
    for (let i = 0; i < attempts; i++) {
      try {
        return await fn();
      } catch (e: unknown) {
        last = e;
        await new Promise<void>((resolve) => setTimeout(resolve, delayMs * 2 ** i));
      }
    }
    throw last instanceof Error ? last : new Error(String(last));
  }

  const page = await retry(() => codemode.http_get({ url: 'https://example.com/status' }));
  return page.status;
}
