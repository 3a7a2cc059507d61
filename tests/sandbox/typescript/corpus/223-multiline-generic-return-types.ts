async () => {
  const index = (rows: { id: string; team: string }[]): Map<
    string,
    string[]
  > => {
    const m = new Map<string, string[]>();
    for (const r of rows) m.set(r.team, [...(m.get(r.team) ?? []), r.id]);
    return m;
  };
  const wrap = async <T,>(x: Promise<T>): Promise<{
    value: T;
    at: number;
  }> => ({ value: await x, at: Date.now() });
  const noop = ():
    void => {};

  noop();
  const rows = await codemode.hr_list_people({ active: true });
  const { value, at } = await wrap(Promise.resolve(index(rows)));
  return { teams: value.size, at: at > 0 };
}
