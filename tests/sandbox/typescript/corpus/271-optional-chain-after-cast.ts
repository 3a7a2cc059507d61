const resp = await codemode.http_get({ url: 'https://api.example.com/v1/me' });
const body = JSON.parse(resp.body);
const org = (body as { org?: { name?: string } })?.org?.name;
const first = (body.teams as string[] | undefined)?.[0];
const count = (body.count as (() => number) | undefined)?.();
const nn = (body as any)!.id!;
return { org, first, count, nn };
