async () => {
  type Cmd = [name: string, ...args: string[], flag: `--${string}`];
  type Opt = [a: number, b?: number, c?: number];
  const parse = (cmd: Cmd): { name: string; args: string[]; flag: string } => ({
    name: cmd[0],
    args: cmd.slice(1, -1) as string[],
    flag: cmd[cmd.length - 1] as string,
  });
  const total = (...nums: Opt): number => nums.reduce<number>((s, n) => s + (n ?? 0), 0);
  const out = await codemode.shell_run({ argv: ['git', 'status', '--porcelain'] });
  return { parsed: parse(['git', 'status', '--porcelain']), total: total(1, 2), lines: out.stdout.split('\n').length };
}
