async () => {
  interface Plugin {
    name: string;
    setup?(ctx: { log: (msg: string) => void }): void | Promise<void>;
    teardown?: () => void;
  }

  class Reporter implements Plugin {
    name = 'reporter';
    lines: string[] = [];
    setup?(ctx: { log: (msg: string) => void }): void;
    flush?(): string;
  }

  const plugins: Plugin[] = [
    new Reporter(),
    { name: 'timer', setup: ({ log }) => log('timer ready') },
  ];
  const messages: string[] = [];
  for (const p of plugins) await p.setup?.({ log: (m) => messages.push(`${p.name}: ${m}`) });
  await codemode.notes_add({ text: messages.join('; ') || 'no plugin logged' });
  return messages;
}
