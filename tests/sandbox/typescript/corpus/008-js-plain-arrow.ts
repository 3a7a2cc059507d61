async () => {
  const log = await codemode.git_log({ max_count: 5 });
  const lines = log.map((c) => `${c.sha.slice(0, 7)} ${c.message.split('\n')[0]}`);
  return lines.join('\n');
}
