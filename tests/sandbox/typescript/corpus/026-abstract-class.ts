async () => {
  abstract class Check {
    abstract readonly name: string;
    protected abstract probe(): Promise<boolean>;

    async run(): Promise<{ name: string; ok: boolean; ms: number }> {
      const started = Date.now();
      let ok = false;
      try {
        ok = await this.probe();
      } catch {
        ok = false;
      }
      return { name: this.name, ok, ms: Date.now() - started };
    }
  }

  class HttpCheck extends Check {
    readonly name: string;
    constructor(private_url: string) {
      super();
      this.name = `http ${private_url}`;
      this.url = private_url;
    }
    private url: string;
    protected override async probe(): Promise<boolean> {
      const r = await codemode.http_get({ url: this.url });
      return r.status < 400;
    }
  }

  const checks: Check[] = ['https://example.com', 'https://example.org'].map((u) => new HttpCheck(u));
  return Promise.all(checks.map((c) => c.run()));
}
