// Fetch several JSON endpoints with retries, exponential backoff with jitter,
// a per-host concurrency limit and a small typed result.
async () => {
  type Method = 'GET' | 'HEAD';
  interface RequestSpec {
    url: string;
    method?: Method;
    retries?: number;
  }
  interface Outcome<T> {
    url: string;
    ok: boolean;
    attempts: number;
    status?: number;
    data?: T;
    error?: string;
  }
  type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  const backoff = (attempt: number, base = 100, cap = 5_000): number =>
    Math.min(cap, base * 2 ** attempt) * (0.5 + Math.random() / 2);
  const retryable = (status: number): boolean => status === 429 || status >= 500;

  const active = new Map<string, number>();
  async function withHostSlot<T>(url: string, limit: number, fn: () => Promise<T>): Promise<T> {
    const host = new URL(url).host;
    while ((active.get(host) ?? 0) >= limit) await sleep(10);
    active.set(host, (active.get(host) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      active.set(host, active.get(host)! - 1);
    }
  }

  async function fetchJson<T = Json>({ url, method = 'GET', retries = 3 }: RequestSpec): Promise<Outcome<T>> {
    let attempts = 0;
    let lastError = '';
    while (attempts <= retries) {
      attempts++;
      try {
        const r: { status: number; body: string } = await withHostSlot(url, 2, () => codemode.http_request({ url, method }));
        if (r.status < 400) return { url, ok: true, attempts, status: r.status, data: method === 'HEAD' ? undefined : (JSON.parse(r.body) as T) };
        if (!retryable(r.status)) return { url, ok: false, attempts, status: r.status, error: `HTTP ${r.status}` };
        lastError = `HTTP ${r.status}`;
      } catch (e: unknown) {
        lastError = e instanceof Error ? e.message : String(e);
      }
      await sleep(backoff(attempts));
    }
    return { url, ok: false, attempts, error: lastError };
  }

  const specs: RequestSpec[] = [
    { url: 'https://api.example.com/v1/status' },
    { url: 'https://api.example.com/v1/regions', retries: 5 },
    { url: 'https://cdn.example.com/manifest.json', method: 'HEAD' },
  ];
  const outcomes = await Promise.all(specs.map((s) => fetchJson(s)));
  return outcomes.map(({ data, ...rest }) => ({ ...rest, size: data === undefined ? 0 : JSON.stringify(data).length }));
}
