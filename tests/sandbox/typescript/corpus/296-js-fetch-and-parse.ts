const r = await codemode.http_get({ url: 'https://registry.npmjs.org/-/v1/search?text=sandbox&size=5' });
const { objects } = JSON.parse(r.body);
return objects.map(({ package: p, score }) => ({ name: p.name, version: p.version, score: +score.final.toFixed(3) }));
