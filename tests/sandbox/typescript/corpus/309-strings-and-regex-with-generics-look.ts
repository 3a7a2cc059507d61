async () => {
  const code: string = await codemode.fs_read_file({ path: 'src/index.ts' });
  const generics = code.match(/<[A-Z]\w*(?:,\s*[A-Z]\w*)*>/g) ?? [];
  const arrows = (code.match(/=>/g) ?? []).length;
  const fake = 'a < b > c';
  const alsoFake = `Map<string, number> ${'x'}`;
  const cmp = (a: number, b: number, c: number): boolean => a < b && b > c;
  return { generics: generics.length, arrows, fake, alsoFake, cmp: cmp(1, 2, 0) };
}
