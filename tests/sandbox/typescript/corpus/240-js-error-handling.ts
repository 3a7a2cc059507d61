async () => {
  const results = [];
  for (const id of ['a1', 'b2', 'c3']) {
    try {
      const r = await codemode.orders_get({ id });
      results.push({ id, total: r.total });
    } catch (err) {
      results.push({ id, error: err?.message ?? String(err) });
    } finally {
      console.log('checked', id);
    }
  }
  return results;
}
