async () => {
  class RateLimiter {
    private readonly queue: Array<() => void> = [];
    private active = 0;
    public static readonly DEFAULT_LIMIT: number = 4;

    constructor(private_limit: number = RateLimiter.DEFAULT_LIMIT) {
      this.limit = private_limit;
    }
    protected limit: number;

    async run<T>(task: () => Promise<T>): Promise<T> {
      if (this.active >= this.limit) {
        await new Promise<void>((r) => this.queue.push(r));
      }
      this.active++;
      try {
        return await task();
      } finally {
        this.active--;
        this.queue.shift()?.();
      }
    }
  }

  const limiter = new RateLimiter(2);
  const urls: string[] = await codemode.sitemap_urls({ site: 'https://example.com' });
  const sizes = await Promise.all(
    urls.slice(0, 10).map((url) => limiter.run(() => codemode.http_get({ url }).then((r: { body: string }) => r.body.length))),
  );
  return sizes.reduce((a, b) => a + b, 0);
}
