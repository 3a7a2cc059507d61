type TrimLeft<S extends string> = S extends ` ${infer R}` ? TrimLeft<R> : S;
type Split<S extends string, D extends string> = S extends `${infer H}${D}${infer T}` ? [H, ...Split<T, D>] : [S];
type Params<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | Params<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

function route<P extends string>(pattern: P, params: Record<Params<P>, string>): string {
  return pattern.replace(/:(\w+)/g, (_, k: string) => encodeURIComponent((params as Record<string, string>)[k] ?? ''));
}

const trimmed: TrimLeft<'   hi'> = 'hi';
const parts: Split<'a,b,c', ','> = ['a', 'b', 'c'];
const url = route('/repos/:owner/:repo/issues', { owner: 'acme', repo: 'api' });
const r = await codemode.http_get({ url: 'https://api.example.com' + url });
return { trimmed, parts, status: r.status };
