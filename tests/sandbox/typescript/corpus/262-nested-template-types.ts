async () => {
  type Version = `${number}.${number}.${number}`;
  type Tag = `v${Version}` | `release-${`${number}`}`;
  type Key<P extends string, S extends string> = `${P}:${`${S}-${'a' | 'b'}`}`;
  const tags: Tag[] = (await codemode.git_tags({})).filter((t: string) => /^v\d+\.\d+\.\d+$|^release-\d+$/.test(t));
  const k: Key<'cache', 'user'> = 'cache:user-a';
  return { tags, k, greeting: `hi ${`nested ${tags.length as number}`}` };
}
