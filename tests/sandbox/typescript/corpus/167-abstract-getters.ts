abstract class Report {
  abstract get title(): string;
  protected abstract get rows(): Promise<string[][]>;
  async render(): Promise<string> {
    const rows = await this.rows;
    return [`# ${this.title}`, ...rows.map((r) => r.join('\t'))].join('\n');
  }
}

class DiskReport extends Report {
  get title(): string {
    return 'Disk usage';
  }
  protected get rows(): Promise<string[][]> {
    return codemode.df({}).then((fs: { mount: string; usePct: number }[]) => fs.map((f) => [f.mount, `${f.usePct}%`]));
  }
}

const report: Report = new DiskReport();
return report.render();
