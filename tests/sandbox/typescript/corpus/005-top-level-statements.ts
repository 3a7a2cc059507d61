const files: string[] = await codemode.fs_list_dir({ path: 'src' });
const tsFiles = files.filter((f: string) => f.endsWith('.ts'));
let lines = 0;
for (const f of tsFiles) {
  const text = await codemode.fs_read_file({ path: `src/${f}` }) as string;
  lines += text.split('\n').length;
}
({ files: tsFiles.length, lines });
