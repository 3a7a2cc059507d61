async () => {
  type BlameLine = { author: string; line: number };
  const files: string[] = (await codemode.git_ls_files({ pattern: 'src/**/*.ts' })).slice(0, 20);
  const owners: Record<string, Record<string, number>> = {};
  await Promise.all(
    files.map(async (file) => {
      const blame: BlameLine[] = await codemode.git_blame({ path: file });
      const counts: Record<string, number> = (owners[file] = {});
      for (const { author } of blame) counts[author] = (counts[author] ?? 0) + 1;
    }),
  );
  return Object.fromEntries(
    Object.entries(owners).map(([file, counts]) => {
      const [top] = Object.entries(counts).sort((a, b) => b[1] - a[1]) as [string, number][];
      return [file, top?.[0] ?? 'unknown'];
    }),
  );
}
