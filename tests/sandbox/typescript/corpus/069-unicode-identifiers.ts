async () => {
  type Währung = 'EUR' | 'CHF' | '日元';
  interface Preis {
    betrag: number;
    währung: Währung;
  }
  const preise: Preis[] = await codemode.shop_prices({ sku: 'ÄÖÜ-42' });
  const größter: Preis | undefined = preise.reduce<Preis | undefined>(
    (max, p) => (!max || p.betrag > max.betrag ? p : max),
    undefined,
  );
  const 合計: number = preise.reduce((s, p) => s + p.betrag, 0);
  return { größter, 合計 };
}
