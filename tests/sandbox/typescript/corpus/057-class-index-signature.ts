async () => {
  class Flags {
    [name: string]: boolean | ((name: string) => boolean);
    static [key: string]: unknown;

    has(name: string): boolean {
      return this[name] === true;
    }
  }

  const flags = new Flags();
  const remote: Record<string, boolean> = await codemode.flags_list({ project: 'web' });
  Object.assign(flags, remote);
  return ['new-nav', 'dark-mode', 'beta-search'].filter((f) => flags.has(f));
}
