async () => {
  let attempt = 0;
  let lastError;
  while (attempt < 5) {
    try {
      const r = await codemode.http_get({ url: 'https://flaky.example.com/data' });
      if (r.status >= 500) throw new Error(`HTTP ${r.status}`);
      return JSON.parse(r.body);
    } catch (e) {
      lastError = e;
      attempt++;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
  return { error: String(lastError), attempts: attempt };
}
