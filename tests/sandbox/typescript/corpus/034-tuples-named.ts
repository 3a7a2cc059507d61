type Range = [start: number, end: number];
type Cell = [row: number, col: number, value?: string];
type Args = [command: string, ...flags: string[]];
type Pair<K, V> = readonly [key: K, value: V];

const ranges: Range[] = [[0, 10], [5, 15], [20, 25]];
const merged: Range[] = [];
for (const [s, e] of [...ranges].sort((a, b) => a[0] - b[0])) {
  const last = merged[merged.length - 1];
  if (last && s <= last[1]) last[1] = Math.max(last[1], e);
  else merged.push([s, e]);
}
const cell: Cell = [1, 2];
const args: Args = ['deploy', '--dry-run', '--verbose'];
const pair: Pair<string, number> = ['retries', 3];
const out = await codemode.shell_run({ argv: args });
return { merged, cell, pair, exit: out.code };
