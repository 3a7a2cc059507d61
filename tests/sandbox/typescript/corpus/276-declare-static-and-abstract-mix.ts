async () => {
  abstract class Model {
    declare static table: string;
    declare id: number;
    static async count<M extends typeof Model>(this: M): Promise<number> {
      const rows: { n: number }[] = await codemode.db_query({ sql: `select count(*) as n from ${this.table}` });
      return rows[0]?.n ?? 0;
    }
    abstract validate(): boolean;
  }
  class Order extends Model {
    static override table = 'orders';
    total: number = 0;
    validate(): boolean {
      return this.total >= 0;
    }
  }
  class Refund extends Model {
    static table = 'refunds';
    validate = (): boolean => true;
  }
  return { orders: await Order.count(), refunds: await Refund.count() };
}
