// Long generic signatures wrapped the way a formatter wraps them: an async
// arrow's type parameters on their own lines, a return type over several.
const fetchAll = async <
  TItem extends { id: string },
  TKey extends keyof TItem = keyof TItem,
>(
  tool: string,
  key: TKey,
): Promise<
  Array<TItem[TKey]>
> => {
  const page = (await codemode[tool]({})) as { items: TItem[] };
  return page.items.map((item) => item[key]);
};

const first = async <T,>(xs: T[]): Promise<T | undefined> => xs[0];

const retry = async <T>
(fn: () => Promise<T>, times = 3): Promise<T> => {
  let last: unknown;
  for (let i = 0; i < times; i++) {
    try {
      return await fn();
    } catch (err) {
      last = err;
    }
  }
  throw last;
};

async function main() {
  const ids = await fetchAll<{ id: string; name: string }, 'id'>('list_users', 'id');
  const one = await first(ids);
  const again = await retry(async () => one);
  return { count: ids.length, first: one ?? null, again };
}
