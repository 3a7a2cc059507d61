async () => {
  const snippet: string = 'const x: number = 1; interface Foo { a?: string }';
  const other = "type T = Array<string> & { readonly k: never }";
  const tmpl = `function f<T>(x: T): T { return x as T; } // ${snippet.length}`;
  const re = /interface\s+(\w+)/;
  const doc: string = await codemode.fs_read_file({ path: 'types.d.ts' });
  const names = [...doc.matchAll(/(?:interface|type)\s+(\w+)/g)].map((m) => m[1]);
  return { names, matched: re.exec(snippet)?.[1], other: other.length, tmpl: tmpl.slice(0, 12) };
}
