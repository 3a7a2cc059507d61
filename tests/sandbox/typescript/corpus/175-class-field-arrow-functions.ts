async () => {
  class Poller {
    private timer: ReturnType<typeof setTimeout> | null = null;
    private readonly seen = new Set<string>();
    onNew: (id: string) => void = () => {};
    private tick = async (): Promise<void> => {
      const ids: string[] = await codemode.inbox_list_ids({ folder: 'support' });
      for (const id of ids) if (!this.seen.has(id)) (this.seen.add(id), this.onNew(id));
    };
    readonly poll = async (times: number): Promise<number> => {
      for (let i = 0; i < times; i++) await this.tick();
      return this.seen.size;
    };
  }
  const p = new Poller();
  const fresh: string[] = [];
  p.onNew = (id) => fresh.push(id);
  await p.poll(2);
  return fresh.slice(0, 10);
}
