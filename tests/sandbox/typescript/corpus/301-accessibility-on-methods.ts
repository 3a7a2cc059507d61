async () => {
  class Inventory {
    private items: Map<string, number> = new Map();
    public add(sku: string, qty: number): void {
      this.items.set(sku, this.get(sku) + qty);
    }
    protected get(sku: string): number {
      return this.items.get(sku) ?? 0;
    }
    private static normalize(sku: string): string {
      return sku.trim().toUpperCase();
    }
    public static async load(): Promise<Inventory> {
      const inv = new Inventory();
      const rows: { sku: string; qty: number }[] = await codemode.warehouse_stock({ site: 'north' });
      for (const r of rows) inv.add(Inventory.normalize(r.sku), r.qty);
      return inv;
    }
    public low(threshold = 5): string[] {
      return [...this.items].filter(([, q]) => q < threshold).map(([s]) => s);
    }
  }
  return (await Inventory.load()).low();
}
