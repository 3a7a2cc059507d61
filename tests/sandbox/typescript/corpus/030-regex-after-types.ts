async () => {
  const re: RegExp = /a<b>c/g;
  const semver: RegExp = /^v?(\d+)\.(\d+)\.(\d+)(?:-([\w.]+))?$/;
  const tags: string[] = await codemode.git_tags({});
  const versions = tags
    .map((t): RegExpExecArray | null => semver.exec(t))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [Number(m[1]), Number(m[2]), Number(m[3])] as [number, number, number]);
  versions.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const html = '<b>x</b>'.replace(/</g, '&lt;').replace(re, 'X');
  return { latest: versions.at(-1)?.join('.'), html };
}
