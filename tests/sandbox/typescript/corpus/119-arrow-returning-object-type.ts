async () => {
  const parseLine = (line: string): { level: string; msg: string } | null => {
    const m = /^\[(\w+)\]\s+(.*)$/.exec(line);
    return m ? { level: m[1]!, msg: m[2]! } : null;
  };
  const toKey = ({ level }: { level: string }): string => level.toLowerCase();
  const text: string = await codemode.fs_read_file({ path: '/var/log/app.log' });
  const counts: Record<string, number> = {};
  for (const entry of text.split('\n').map(parseLine)) {
    if (entry) counts[toKey(entry)] = (counts[toKey(entry)] ?? 0) + 1;
  }
  return counts;
}
