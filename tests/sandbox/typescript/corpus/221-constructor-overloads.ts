async () => {
  class Money {
    readonly cents: number;
    readonly currency: string;
    constructor(cents: number, currency?: string);
    constructor(text: string);
    constructor(a: number | string, currency: string = 'EUR') {
      if (typeof a === 'string') {
        const m = /^([\d.]+)\s*([A-Z]{3})$/.exec(a.trim());
        this.cents = Math.round(Number(m?.[1] ?? 0) * 100);
        this.currency = m?.[2] ?? currency;
      } else {
        this.cents = a;
        this.currency = currency;
      }
    }
    static sum(xs: Money[]): Money {
      return new Money(xs.reduce((s, m) => s + m.cents, 0), xs[0]?.currency);
    }
    toString(): string {
      return `${(this.cents / 100).toFixed(2)} ${this.currency}`;
    }
  }
  const lines: string[] = await codemode.expenses_list({ month: '2024-05' });
  return Money.sum(lines.map((l) => new Money(l))).toString();
}
