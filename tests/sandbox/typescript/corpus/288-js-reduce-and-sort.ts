async () => {
  const sales = await codemode.shop_sales({ from: '2024-01-01', to: '2024-03-31' });
  const byProduct = sales.reduce((acc, s) => {
    acc[s.sku] = acc[s.sku] || { units: 0, revenue: 0 };
    acc[s.sku].units += s.qty;
    acc[s.sku].revenue += s.qty * s.price;
    return acc;
  }, {});
  return Object.entries(byProduct)
    .sort((a, b) => b[1].revenue - a[1].revenue)
    .slice(0, 5)
    .map(([sku, v]) => `${sku}: ${v.units} units, ${v.revenue.toFixed(2)}`);
}
