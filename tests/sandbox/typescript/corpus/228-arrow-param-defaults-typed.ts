async () => {
  const page = async ({ size = 20, cursor }: { size?: number; cursor?: string } = {}): Promise<{ items: string[]; next?: string }> =>
    codemode.storage_list({ bucket: 'logs', size, cursor });
  const opt = (a?: number, b: number = a ?? 0): number => (a ?? 0) + b;
  const curried = (x: number): ((y: number) => number) => (y) => x + y;
  const first = await page();
  const second = first.next ? await page({ cursor: first.next }) : { items: [] };
  return { n: first.items.length + second.items.length, opt: opt(2), c: curried(1)(2) };
}
