async () => {
  const pkg = await codemode.npm_view({ name: 'left-pad' });
  const repoUrl = pkg?.repository?.url?.replace(/^git\+/, '') ?? null;
  const maintainer = pkg.maintainers?.[0]?.name;
  const deprecated = pkg.deprecated?.length > 0;
  const latest = pkg['dist-tags']?.latest;
  const fn = pkg.toJSON?.();
  return { repoUrl, maintainer, deprecated, latest, hasFn: fn !== undefined };
}
