async () => {
  function* ids(): Generator<number, void, string> {
    const echoed = (yield 1) as string;
    yield echoed.length as number;
  }
  async function* lines(): AsyncGenerator<string> {
    const text = (await codemode.fs_read_file({ path: 'lines.txt' })) as string;
    for (const l of text.split('\n')) yield l as string;
  }
  const g = ids();
  g.next();
  const second = g.next('hello').value;
  const out: string[] = [];
  for await (const l of lines()) if (out.push(l) >= 3) break;
  return { second, out };
}
