interface Ok<T> { ok: true; value: T }
interface Err { ok: false; error: string }
type Result<T> = Ok<T> | Err;

function isOk<T>(r: Result<T>): r is Ok<T> {
  return r.ok;
}

const checks: Result<number>[] = await Promise.all(
  ['db', 'cache', 'queue'].map((name) => codemode.health_check({ component: name })),
);
const latencies = checks.filter(isOk).map((r) => r.value);
const failures = checks.filter((r): r is Err => !r.ok).map((r) => r.error);
return { avg: latencies.reduce((a, b) => a + b, 0) / (latencies.length || 1), failures };
