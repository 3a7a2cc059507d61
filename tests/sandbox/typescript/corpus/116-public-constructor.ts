class Progress {
  public constructor(total: number, label?: string) {
    this.total = total;
    this.label = label ?? 'progress';
  }
  public readonly total: number;
  public readonly label: string;
  private done = 0;
  public tick(n: number = 1): string {
    this.done = Math.min(this.total, this.done + n);
    const pct = Math.round((this.done / this.total) * 100);
    return `${this.label}: ${'#'.repeat(pct / 5)}${'.'.repeat(20 - pct / 5)} ${pct}%`;
  }
}

const files: string[] = await codemode.fs_glob({ pattern: 'data/*.json' });
const p = new Progress(files.length, 'validating');
let last = '';
for (const f of files) {
  await codemode.json_validate({ path: f, schema: 'schemas/record.json' });
  last = p.tick();
}
return last;
