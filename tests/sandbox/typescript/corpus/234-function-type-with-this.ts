async () => {
  type Handler = (this: { name: string; hits: number }, path: string) => boolean;
  type Ctor = { new (name: string): { name: string } };
  const matchApi: Handler = function (path) {
    this.hits++;
    return path.startsWith(`/${this.name}`);
  };
  const ctx = { name: 'api', hits: 0 };
  const paths: string[] = await codemode.accesslog_paths({ minutes: 10 });
  const api = paths.filter((p) => matchApi.call(ctx, p));
  const C: Ctor = class {
    constructor(name: string) {
      this.name = name;
    }
    name: string;
  };
  return { api: api.length, hits: ctx.hits, c: new C('x').name };
}
