async () => {
  function minMax(xs: number[]): [min: number, max: number] | [] {
    return xs.length ? [Math.min(...xs), Math.max(...xs)] : [];
  }
  function splitAt<T>(xs: readonly T[], i: number): readonly [T[], T[]] {
    return [xs.slice(0, i), xs.slice(i)] as const;
  }
  const prices: number[] = await codemode.market_prices({ symbol: 'ACME', days: 30 });
  const [lo, hi] = minMax(prices);
  const [firstHalf, secondHalf] = splitAt(prices, prices.length >> 1);
  const avg = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / (xs.length || 1);
  return { lo, hi, trend: avg(secondHalf) - avg(firstHalf) };
}
