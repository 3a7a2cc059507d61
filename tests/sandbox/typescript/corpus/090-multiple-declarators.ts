let total: number = 0, errors: number = 0, slowest: string | undefined, slowestMs = 0;
const started: number = Date.now(), limit: number = 25;

const endpoints: string[] = await codemode.api_list_endpoints({ service: 'billing' });
for (const e of endpoints.slice(0, limit)) {
  const t0 = Date.now();
  const r: { status: number } = await codemode.http_get({ url: e });
  const ms = Date.now() - t0;
  total++;
  if (r.status >= 400) errors++;
  if (ms > slowestMs) [slowest, slowestMs] = [e, ms];
}
return { total, errors, slowest, slowestMs, elapsed: Date.now() - started };
