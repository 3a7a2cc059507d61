async () => {
  interface Txn { account: string; amount: number; currency: 'EUR' | 'USD'; at: string }
  const txns: Txn[] = await codemode.bank_transactions({ month: '2024-04' });
  const byAccount = txns.reduce<Record<string, { in: number; out: number }>>((acc, t) => {
    const e = (acc[t.account] ??= { in: 0, out: 0 });
    if (t.amount >= 0) e.in += t.amount;
    else e.out -= t.amount;
    return acc;
  }, {});
  const total = txns.reduce((s: number, t: Txn): number => s + t.amount, 0);
  const byDay = txns.reduce((m, t) => m.set(t.at.slice(0, 10), (m.get(t.at.slice(0, 10)) ?? 0) + 1), new Map<string, number>());
  return { byAccount, total, busiestDay: [...byDay].sort((a, b) => b[1] - a[1])[0]?.[0] };
}
