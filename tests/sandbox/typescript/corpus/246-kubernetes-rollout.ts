async () => {
  interface Deployment {
    metadata: { name: string; namespace: string };
    spec: { replicas: number };
    status: { readyReplicas?: number; updatedReplicas?: number; conditions?: { type: string; status: 'True' | 'False' }[] };
  }
  const deps: Deployment[] = (await codemode.kubectl_get({ kind: 'deployments', namespace: 'prod' })).items;
  const lagging = deps.filter((d) => (d.status.readyReplicas ?? 0) < d.spec.replicas);
  const stuck = deps.filter((d) => d.status.conditions?.some((c) => c.type === 'Progressing' && c.status === 'False'));
  for (const d of stuck) {
    await codemode.kubectl_rollout_undo({ name: d.metadata.name, namespace: d.metadata.namespace });
  }
  return {
    lagging: lagging.map((d) => `${d.metadata.name} ${d.status.readyReplicas ?? 0}/${d.spec.replicas}`),
    rolledBack: stuck.map((d) => d.metadata.name),
  };
}
