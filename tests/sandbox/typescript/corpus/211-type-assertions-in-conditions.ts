const res = await codemode.http_get({ url: 'https://api.example.com/flags' });
if ((res.status as number) === 304) return 'unchanged';
while ((res.body as string).length === 0) break;
const flags = JSON.parse(res.body) as Record<string, boolean>;
for (const k in flags as object) if (!(flags[k] as boolean)) delete flags[k];
do {} while (false as boolean);
return Object.keys(flags);
