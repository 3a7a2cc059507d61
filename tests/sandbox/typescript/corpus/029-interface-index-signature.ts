async () => {
  interface Headers {
    [name: string]: string | string[] | undefined;
    'content-type'?: string;
    readonly date?: string;
  }
  interface Response {
    status: number;
    headers: Headers;
    body: string;
  }

  const r: Response = await codemode.http_get({ url: 'https://example.com/api/items?page=1' });
  const type = r.headers['content-type'] ?? 'application/octet-stream';
  const link = r.headers['link'];
  const next = typeof link === 'string' ? /<([^>]+)>;\s*rel="next"/.exec(link)?.[1] : undefined;
  return { type, next };
}
