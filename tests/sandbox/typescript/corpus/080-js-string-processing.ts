async () => {
  const readme = await codemode.fs_read_file({ path: 'README.md' });
  const words = readme.toLowerCase().match(/[a-z']+/g) ?? [];
  const freq = {};
  for (const w of words) {
    if (w.length < 4) continue;
    freq[w] = (freq[w] || 0) + 1;
  }
  return Object.entries(freq)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 10)
    .map(([w, n]) => `${w}: ${n}`);
}
