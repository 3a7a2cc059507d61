const html = (await codemode.http_get({ url: 'https://example.com' })).body;
const title = /<title>([^<]*)<\/title>/i.exec(html)?.[1] ?? '';
const metas = [...html.matchAll(/<meta\s+name="([^"]+)"\s+content="([^"]*)"/g)].map(([, n, c]) => `${n}=${c}`);
const tag = (strings, ...values) => strings.reduce((a, s, i) => a + s + (values[i] ?? ''), '');
return tag`Title: ${title} (${metas.length} meta tags) <${'ok'}>`;
