async function report(): Promise<{ ok: number; failed: number }> {
  const checks: { ok: boolean }[] = await codemode.synthetics_results({ window: '1h' });
  return { ok: checks.filter((c) => c.ok).length, failed: checks.filter((c) => !c.ok).length };
}
