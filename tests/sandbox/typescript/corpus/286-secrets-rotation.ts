async () => {
  interface Secret { name: string; rotatedAt: string; maxAgeDays?: number }
  const DEFAULT_MAX_AGE = 90;
  const secrets: Secret[] = await codemode.vault_list({ path: 'apps/' });
  const due = secrets.filter((s) => (Date.now() - Date.parse(s.rotatedAt)) / 864e5 > (s.maxAgeDays ?? DEFAULT_MAX_AGE));
  const results: Array<{ name: string; ok: boolean; error?: string }> = [];
  for (const s of due) {
    try {
      await codemode.vault_rotate({ name: s.name });
      results.push({ name: s.name, ok: true });
    } catch (e: unknown) {
      results.push({ name: s.name, ok: false, error: (e as Error)?.message ?? 'unknown' });
    }
  }
  return results;
}
