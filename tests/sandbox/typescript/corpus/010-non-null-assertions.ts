async () => {
  const pods = await codemode.kubectl_get_pods({ namespace: 'default' });
  const byNode = new Map<string, string[]>();
  for (const pod of pods.items) {
    const node: string = pod.spec!.nodeName!;
    if (!byNode.has(node)) byNode.set(node, []);
    byNode.get(node)!.push(pod.metadata!.name);
  }
  const busiest = [...byNode.entries()].sort((a, b) => b[1].length - a[1].length)[0]!;
  return { node: busiest[0], pods: busiest[1].length };
}
