async () => {
  interface Producer<out T> {
    produce(): T;
  }
  interface Consumer<in T> {
    consume(value: T): void;
  }
  interface Channel<in out T> extends Producer<T>, Consumer<T> {}
  type Mapper<in A, out B> = (a: A) => B;

  const buffer: string[] = [];
  const channel: Channel<string> = {
    produce: () => buffer.shift() ?? '',
    consume: (v) => void buffer.push(v),
  };
  const upper: Mapper<string, string> = (s) => s.toUpperCase();
  const msgs: string[] = await codemode.queue_receive({ queue: 'greetings', max: 5 });
  msgs.forEach((m) => channel.consume(upper(m)));
  return [channel.produce(), channel.produce()];
}
