async () => {
  const parse = (s: string): // the parsed pair
    [key: string, value: string] /* or throws */ => {
    const i = s.indexOf('=');
    if (i < 0) throw new Error(`no '=' in ${s}`);
    return [s.slice(0, i), s.slice(i + 1)];
  };
  const env: string = await codemode.fs_read_file({ path: '.env.example' });
  return Object.fromEntries(env.split('\n').filter((l) => l && !l.startsWith('#')).map(parse));
}
