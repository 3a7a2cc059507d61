async () => {
  function formatBytes(n: number, decimals?: number, unit: 'SI' | 'IEC' = 'IEC'): string {
    const base = unit === 'SI' ? 1000 : 1024;
    const units = unit === 'SI' ? ['B', 'kB', 'MB', 'GB'] : ['B', 'KiB', 'MiB', 'GiB'];
    let i = 0;
    while (n >= base && i < units.length - 1) {
      n /= base;
      i++;
    }
    return `${n.toFixed(decimals ?? 1)} ${units[i]}`;
  }

  const objects = await codemode.s3_list_objects({ bucket: 'backups', prefix: '2024/' });
  const total = objects.reduce((sum: number, o: { size: number }) => sum + o.size, 0);
  return formatBytes(total, 2);
}
