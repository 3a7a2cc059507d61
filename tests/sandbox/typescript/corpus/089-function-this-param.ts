async () => {
  interface Ctx { prefix: string; out: string[] }
  const log = function (this: Ctx, ...parts: unknown[]): void {
    this.out.push(`${this.prefix} ${parts.map(String).join(' ')}`);
  };
  const ctx: Ctx = { prefix: '[sync]', out: [] };
  const bound = log.bind(ctx) as (...parts: unknown[]) => void;

  const changes = await codemode.drive_list_changes({ since: '2024-06-01' });
  for (const c of changes) bound(c.kind, c.file?.name ?? '?');
  return ctx.out;
}
