async () => {
  type Dict<V> = { [key: string]: V };
  type Nested = Map<string, Array<Promise<Dict<Set<number>>>>>;
  const index: Nested = new Map<string, Array<Promise<Dict<Set<number>>>>>();
  const a: Array<Array<number>> = [[1], [2, 3]];
  const b: Promise<Array<Map<string, Set<number>>>> = Promise.resolve([new Map<string, Set<number>>()]);
  const c = new Map<string, Map<string, number[]>>([['x', new Map([['y', [1]]])]]);
  index.set('k', [Promise.resolve({ a: new Set([1, 2]) })]);
  const counts = await codemode.analytics_counts({ dims: ['country', 'device'] });
  return { a: a.length, b: (await b).length, c: c.get('x')!.get('y')!.length, counts, size: index.size };
}
