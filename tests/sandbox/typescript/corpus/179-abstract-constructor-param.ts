async () => {
  abstract class Exporter {
    constructor(name: string) {
      this.name = name;
    }
    readonly name: string;
    protected abstract serialize(rows: object[]): string;
    abstract get extension(): string;
    async export(rows: object[]): Promise<string> {
      const path = `/tmp/${this.name}.${this.extension}`;
      await codemode.fs_write_file({ path, content: this.serialize(rows) });
      return path;
    }
  }
  class JsonExporter extends Exporter {
    protected serialize(rows: object[]): string {
      return JSON.stringify(rows, null, 2);
    }
    get extension(): string {
      return 'json';
    }
  }
  const rows: object[] = await codemode.db_query({ sql: 'select * from audit_log order by at desc limit 100' });
  return new JsonExporter('audit').export(rows);
}
