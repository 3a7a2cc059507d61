async () => {
  const summarize = (items: { size: number; name: string }[]): {
    count: number;
    bytes: number;
    largest: string | null;
  } => {
    let largest: { size: number; name: string } | null = null;
    let bytes = 0;
    for (const it of items) {
      bytes += it.size;
      if (!largest || it.size > largest.size) largest = it;
    }
    return { count: items.length, bytes, largest: largest?.name ?? null };
  };

  const files = await codemode.fs_list_dir({ path: '/var/log', details: true });
  return summarize(files);
}
