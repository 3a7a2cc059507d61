type HttpStatus =
  | 200
  | 201
  | 204
  | 301
  | 302
  | 400
  | 401
  | 403
  | 404
  | 409
  | 429
  | 500
  | 502
  | 503;
type Family = `${1 | 2 | 3 | 4 | 5}xx`;

const statuses: HttpStatus[] = await codemode.loadbalancer_status_codes({ lb: 'public', minutes: 15 });
const families = statuses.reduce<Partial<Record<Family, number>>>((acc, s) => {
  const f = `${String(s)[0]}xx` as Family;
  acc[f] = (acc[f] ?? 0) + 1;
  return acc;
}, {});
return families;
