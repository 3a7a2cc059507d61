async () => {
  interface Container { id: string; image: string; status: string; created: number; names: string[] }
  const containers = (await codemode.docker_ps({ all: true })) as Container[];
  const exited = containers.filter((c) => c.status.startsWith('Exited'));
  const oldest = exited.reduce<Container | null>((o, c) => (!o || c.created < o.created ? c : o), null);
  const removed: string[] = [];
  for (const c of exited.slice(0, 10)) {
    await codemode.docker_rm({ id: c.id });
    removed.push(c.names[0]!.replace(/^\//, ''));
  }
  return { removed, oldest: oldest?.image ?? null };
}
