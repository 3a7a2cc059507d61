async () => {
  const formatter = {
    money(
      amount: number,
      currency: string = 'USD',
    ): string {
      return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(amount);
    },
    percent(value: number, digits?: number): string {
      return `${(value * 100).toFixed(digits ?? 1)}%`;
    },
    async remote<T extends string>(kind: T): Promise<`${T}:${string}`> {
      return `${kind}:${(await codemode.format_remote({ kind })).text}`;
    },
  };
  const kpi = await codemode.analytics_kpis({ range: '30d' });
  return { revenue: formatter.money(kpi.revenue), churn: formatter.percent(kpi.churn), r: await formatter.remote('x') };
}
