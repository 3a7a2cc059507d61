function prop<T, K extends keyof T>(obj: T, key: K): T[K] {
  return obj[key];
}
function pluck<T, K extends keyof T>(items: T[], ...keys: K[]): Pick<T, K>[] {
  return items.map((it) => Object.fromEntries(keys.map((k) => [k, it[k]])) as Pick<T, K>);
}

interface Pod { name: string; phase: 'Running' | 'Pending' | 'Failed'; restarts: number; node: string }
const pods: Pod[] = (await codemode.kubectl_get_pods({ namespace: 'prod' })).items;
const restarts = pods.map((p) => prop(p, 'restarts'));
return { table: pluck(pods, 'name', 'phase'), maxRestarts: Math.max(0, ...restarts) };
