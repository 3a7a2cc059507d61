const api = {
  base: 'https://api.example.com/v2',
  async get(path, params = {}) {
    const qs = new URLSearchParams(params).toString();
    const r = await codemode.http_get({ url: `${this.base}${path}${qs ? '?' + qs : ''}` });
    return JSON.parse(r.body);
  },
  get version() {
    return this.base.split('/').pop();
  },
};
const me = await api.get('/me');
const orgs = await api.get('/orgs', { member: me.id });
return { version: api.version, orgs: orgs.map((o) => o.name) };
