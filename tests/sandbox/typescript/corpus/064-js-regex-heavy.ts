async () => {
  const text = await codemode.fs_read_file({ path: 'CHANGELOG.md' });
  const headings = [...text.matchAll(/^##\s+\[?(\d+\.\d+\.\d+)\]?(?:\s+-\s+(\d{4}-\d{2}-\d{2}))?/gm)];
  const links = text.match(/\[[^\]]+\]\((https?:\/\/[^)]+)\)/g) || [];
  const ratio = headings.length / (links.length || 1);
  const slash = 10 / 2 / 5;
  return { versions: headings.map((m) => m[1]), links: links.length, ratio, slash };
}
