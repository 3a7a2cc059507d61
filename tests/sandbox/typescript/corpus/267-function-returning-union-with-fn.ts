async () => {
  const getHandler = (name: string): ((payload: unknown) => Promise<void>) | null =>
    name === 'log' ? async (p) => void console.log(p) : null;
  const makeCleanup = (): (() => void) | undefined => () => console.log('cleanup');
  const events: { name: string; payload: unknown }[] = await codemode.events_tail({ n: 5 });
  let handled = 0;
  for (const e of events) {
    const h = getHandler(e.name);
    if (h) (await h(e.payload), handled++);
  }
  makeCleanup()?.();
  return handled;
}
