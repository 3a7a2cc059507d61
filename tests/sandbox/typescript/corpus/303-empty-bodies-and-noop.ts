async () => {
  interface Empty {}
  type Nothing = {};
  class Noop implements Empty {}
  const noop = (): void => {};
  function alsoNoop(_: Nothing): void {}
  const e: Empty = new Noop();
  noop();
  alsoNoop(e);
  return (await codemode.ping({})) as {};
}
