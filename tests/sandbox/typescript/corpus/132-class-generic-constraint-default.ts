async () => {
  class EventBus<Events extends Record<string, unknown[]> = Record<string, unknown[]>> {
    private listeners: { [E in keyof Events]?: Array<(...args: Events[E]) => void> } = {};
    on<E extends keyof Events>(event: E, fn: (...args: Events[E]) => void): () => void {
      (this.listeners[event] ??= []).push(fn);
      return () => {
        this.listeners[event] = this.listeners[event]!.filter((f) => f !== fn);
      };
    }
    emit<E extends keyof Events>(event: E, ...args: Events[E]): number {
      const fns = this.listeners[event] ?? [];
      fns.forEach((f) => f(...args));
      return fns.length;
    }
  }

  type Events = { progress: [done: number, total: number]; done: [summary: string] };
  const bus = new EventBus<Events>();
  const log: string[] = [];
  bus.on('progress', (d, t) => log.push(`${d}/${t}`));
  const off = bus.on('done', (s) => log.push(s));
  const items: string[] = await codemode.queue_peek({ queue: 'emails', n: 3 });
  items.forEach((_, i) => bus.emit('progress', i + 1, items.length));
  bus.emit('done', 'finished');
  off();
  return log;
}
