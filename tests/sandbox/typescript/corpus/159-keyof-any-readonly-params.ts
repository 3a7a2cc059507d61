async () => {
  function countBy<T>(items: readonly T[], key: (t: T) => keyof any): Record<keyof any, number> {
    const out: Record<keyof any, number> = {};
    for (const it of items) {
      const k = key(it);
      out[k] = (out[k] ?? 0) + 1;
    }
    return out;
  }
  function sum(xs: readonly number[], init: number = 0): number {
    return xs.reduce((a, b) => a + b, init);
  }

  const orders: readonly { status: string; total: number }[] = await codemode.shop_list_orders({ days: 30 });
  return { byStatus: countBy(orders, (o) => o.status), revenue: sum(orders.map((o) => o.total)) };
}
