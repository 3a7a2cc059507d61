async () => {
  class Settings {
    public static readonly VERSION: number = 3;
    protected static readonly defaults: Readonly<Record<string, string>> = { theme: 'light' };
    private static override_?: Record<string, string>;
    public readonly values: Record<string, string>;
    private readonly loadedAt: number = Date.now();
    declare protected readonly source: string;

    constructor(values: Record<string, string>) {
      this.values = { ...Settings.defaults, ...(Settings.override_ ?? {}), ...values };
    }
    public get age(): number {
      return Date.now() - this.loadedAt;
    }
  }
  const s = new Settings(await codemode.settings_get({ scope: 'ui' }));
  return { version: Settings.VERSION, theme: s.values.theme, age: s.age >= 0 };
}
