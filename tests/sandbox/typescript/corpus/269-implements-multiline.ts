async () => {
  interface Readable { read(): Promise<string> }
  interface Closable { close(): void }
  interface Named { readonly name: string }

  class RemoteFile
    implements
      Readable,
      Closable,
      Named
  {
    closed = false;
    constructor(path: string) {
      this.name = path;
    }
    readonly name: string;
    async read(): Promise<string> {
      if (this.closed) throw new Error('closed');
      return codemode.fs_read_file({ path: this.name });
    }
    close(): void {
      this.closed = true;
    }
  }
  const f = new RemoteFile('README.md');
  const text = await f.read();
  f.close();
  return text.split('\n')[0];
}
