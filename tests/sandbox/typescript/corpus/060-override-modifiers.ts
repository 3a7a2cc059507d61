async () => {
  class Formatter {
    format(value: unknown): string {
      return String(value);
    }
    protected pad(s: string, n: number): string {
      return s.padStart(n);
    }
  }
  class MoneyFormatter extends Formatter {
    constructor(public_currency: string = 'EUR') {
      super();
      this.currency = public_currency;
    }
    public currency: string;
    public override format(value: unknown): string {
      return `${(value as number).toFixed(2)} ${this.currency}`;
    }
    protected override pad(s: string, n: number): string {
      return super.pad(s, n + 1);
    }
  }

  const totals: Record<string, number> = await codemode.billing_totals({ year: 2024 });
  const f: Formatter = new MoneyFormatter();
  return Object.entries(totals).map(([k, v]) => `${k}: ${f.format(v)}`);
}
