async () => {
  interface Chunk { seq: number; data: string; last?: boolean }
  async function* stream(id: string): AsyncIterableIterator<Chunk> {
    for (let seq = 0; ; seq++) {
      const c = (await codemode.download_chunk({ id, seq })) as Chunk;
      yield c;
      if (c.last) return;
    }
  }
  let size = 0;
  const parts: string[] = [];
  for await (const { data, seq } of stream('export-42') as AsyncIterable<Chunk>) {
    size += data.length;
    if (seq < 3) parts.push(data.slice(0, 10));
  }
  return { size, preview: parts.join('|') };
}
