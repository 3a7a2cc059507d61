const raw = await codemode.fs_read_file({ path: 'export.json' });
const data = JSON.parse(raw, (key, value) => (key === 'date' ? new Date(value) : value));
const out = data.records
  .filter(({ date }) => date.getUTCFullYear() === 2024)
  .map(({ id, date, ...rest }) => ({ id, month: date.getUTCMonth() + 1, ...rest }));
await codemode.fs_write_file({ path: 'export-2024.json', content: JSON.stringify(out, null, 2) });
return out.length;
