const pods = await codemode.kubectl_get_pods({ namespace: 'staging' });
const crashing = pods.items.filter((p) => p.status.containerStatuses?.some((c) => c.restartCount > 5));
for (const p of crashing) {
  console.log(p.metadata.name, p.status.containerStatuses.map((c) => c.restartCount).join(','));
}
crashing.length;
