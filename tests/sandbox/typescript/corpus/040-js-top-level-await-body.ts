const since = new Date(Date.now() - 7 * 24 * 3600 * 1000).toISOString();
const commits = await codemode.git_log({ since, max_count: 200 });
const files = new Map();
for (const c of commits) {
  for (const f of c.files || []) files.set(f, (files.get(f) || 0) + 1);
}
const hot = [...files].sort((a, b) => b[1] - a[1]).slice(0, 10);
return hot.map(([f, n]) => `${n}\t${f}`).join('\n');
