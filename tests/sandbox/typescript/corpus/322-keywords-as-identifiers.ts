async () => {
  const namespace: string = 'prod';
  let type: 'pod' | 'svc' = 'pod';
  const declare = (what: string): string => `declared ${what}`;
  const abstract: boolean = false;
  const module = { name: 'billing' };
  const as = 1, satisfies = 2, is = 3, infer = 4, keyof = 5, readonly = 6, asserts = 7, out = 8;
  const pods = await codemode.kubectl_get_pods({ namespace });
  type = pods.items.length ? 'pod' : 'svc';
  const kinds = { type, namespace, declare: declare('x'), abstract, module: module.name, interface: 'eth0' };
  return { kinds, sum: as + satisfies + is + infer + keyof + readonly + asserts + out };
}
