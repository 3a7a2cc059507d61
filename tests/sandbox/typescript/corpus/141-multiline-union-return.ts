async () => {
  const classify = (ms: number):
    | 'fast'
    | 'ok'
    | 'slow' => (ms < 100 ? 'fast' : ms < 1000 ? 'ok' : 'slow');

  const timings: number[] = await codemode.apm_timings({ route: '/checkout', n: 50 });
  const buckets = { fast: 0, ok: 0, slow: 0 };
  for (const t of timings) buckets[classify(t)]++;
  return buckets;
}
