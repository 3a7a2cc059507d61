async () => {
  const orders = await codemode.shop_list_orders({ days: 7 });
  const byDay = Object.groupBy
    ? Object.groupBy(orders, (o) => o.created_at.slice(0, 10))
    : orders.reduce((acc, o) => ((acc[o.created_at.slice(0, 10)] ??= []).push(o), acc), {});
  return Object.entries(byDay)
    .map(([day, list]) => ({ day, n: list.length, total: list.reduce((s, o) => s + o.total, 0) }))
    .toSorted?.((a, b) => a.day.localeCompare(b.day)) ?? [];
}
