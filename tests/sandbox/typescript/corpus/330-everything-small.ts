// A short snippet that touches many kinds of erasable syntax at once.
declare const codemode: any;
type Id = string & { readonly brand?: unique symbol };
interface Item<T = unknown> { id: Id; value: T; tags?: readonly string[] }
abstract class Repo<T> {
  protected abstract load(): Promise<Item<T>[]>;
  private cache?: Item<T>[];
  public async all(this: Repo<T>): Promise<Item<T>[]> {
    return (this.cache ??= await this.load());
  }
}
class NumberRepo extends Repo<number> implements Iterable<never> {
  declare readonly kind: 'numbers';
  protected override async load(): Promise<Item<number>[]> {
    return (await codemode.kv_list_values({ prefix: 'n:' })) as Item<number>[];
  }
  [Symbol.iterator](): Iterator<never> {
    return [][Symbol.iterator]();
  }
}
function sum(xs: Item<number>[]): number;
function sum(xs: Item<number>[], key: 'value'): number;
function sum(xs: Item<number>[], _key?: 'value'): number {
  return xs.reduce((s, x) => s + x.value!, 0);
}
let total!: number;
const items = await new NumberRepo().all();
total = sum(items satisfies Item<number>[]);
const big = items.filter((x): x is Item<number> & { tags: string[] } => !!x.tags && <number>x.value > 10);
return { total, big: big.length as number, first: items[0]?.id! } as const;
