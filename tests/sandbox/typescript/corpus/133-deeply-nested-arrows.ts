async () => {
  const compose =
    <A, B, C>(f: (b: B) => C, g: (a: A) => B) =>
    (a: A): C =>
      f(g(a));
  const curry =
    <A, B, R>(fn: (a: A, b: B) => R) =>
    (a: A) =>
    (b: B): R =>
      fn(a, b);

  const words: string[] = (await codemode.fs_read_file({ path: 'words.txt' })).split('\n');
  const countLong = compose((xs: string[]) => xs.length, (xs: string[]) => xs.filter((w) => w.length > 7));
  const add = curry((a: number, b: number) => a + b);
  return { long: countLong(words), seven: add(3)(4) };
}
