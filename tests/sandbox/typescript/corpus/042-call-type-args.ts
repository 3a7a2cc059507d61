async () => {
  const counts = new Map<string, number>();
  const seen = new Set<string>();
  const cache: WeakMap<object, string> = new WeakMap<object, string>();

  const raw = await codemode.fs_read_file({ path: 'access.log' });
  for (const line of (raw as string).split('\n')) {
    const ip = line.split(' ')[0];
    if (!ip) continue;
    seen.add(ip);
    counts.set(ip, (counts.get(ip) ?? 0) + 1);
  }
  const parsed = JSON.parse(raw as string, undefined) as unknown;
  const top = Array.from<[string, number]>(counts).sort((a, b) => b[1] - a[1]).slice(0, 5);
  const asObject = Object.fromEntries<number>(top);
  cache.set(asObject, 'top');
  return { unique: seen.size, top: asObject, parsed };
}
