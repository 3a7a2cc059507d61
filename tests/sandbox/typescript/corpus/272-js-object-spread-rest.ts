async () => {
  const user = await codemode.crm_get_contact({ id: 'c_9' });
  const { password, ssn, ...safe } = user;
  const merged = { ...safe, fetchedAt: new Date().toISOString(), tags: [...(safe.tags || []), 'exported'] };
  await codemode.fs_write_file({ path: `export/${merged.id}.json`, content: JSON.stringify(merged) });
  return Object.keys(merged);
}
