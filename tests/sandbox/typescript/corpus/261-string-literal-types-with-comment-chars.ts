async () => {
  type Scheme = 'http://' | 'https://';
  type Delim = '/*' | '*/' | '//';
  type Quote = "'" | '"' | '`';
  type Path = `${Scheme}${string}`;
  const base: Path = 'https://example.com';
  const delims: Delim[] = ['/*', '*/', '//'];
  const quotes: Quote[] = ["'", '"', '`'];
  const r = await codemode.http_get({ url: `${base}/source.js` });
  const counts = delims.map((d) => (r.body as string).split(d).length - 1);
  return { counts, quotes: quotes.length };
}
