async () => {
  type Fn = (x: number) => number;
  const fns: (Fn | null)[] = [(x) => x + 1, null, (x) => x * 2];
  const pipeline: ((s: string) => string)[] = [(s) => s.trim(), (s) => s.toLowerCase()];
  const maybe: (() => Promise<string>) | undefined = () => codemode.hostname({});
  const host = await maybe?.();
  const out = pipeline.reduce((acc, f) => f(acc), `  ${host}  `);
  const n = fns.reduce((acc: number, f) => (f ? f(acc) : acc), 1);
  return { out, n };
}
