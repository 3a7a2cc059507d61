async () => {
  class HttpError extends Error {
    constructor(status, url) {
      super(`HTTP ${status} for ${url}`);
      this.name = 'HttpError';
      this.status = status;
    }
  }
  async function getJson(url) {
    const r = await codemode.http_get({ url });
    if (r.status !== 200) throw new HttpError(r.status, url);
    return JSON.parse(r.body);
  }
  try {
    return await getJson('https://status.example.com/api/v2/summary.json');
  } catch (e) {
    if (e instanceof HttpError && e.status === 404) return null;
    throw e;
  }
}
