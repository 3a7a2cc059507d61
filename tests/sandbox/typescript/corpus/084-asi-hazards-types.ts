const base = 'https://api.example.com'
type Params = Record<string, string>
(globalThis as any).lastBase = base
interface Opts { retries: number }
[1, 2, 3].forEach((n) => console.log('warm', n))
type Tag = `v${number}`
`${base}/tags`.length
declare const extra: string[]
const opts: Opts = { retries: 2 }
const params: Params = { q: 'is:open' }
const r = await codemode.http_get({ url: `${base}/search?${new URLSearchParams(params)}`, retries: opts.retries })
const tag: Tag = 'v2'
return { status: r.status, tag }
