async () => {
  interface HasId { id: string }
  interface HasUpdated { updatedAt: string }
  function newest<T extends HasId & HasUpdated>(items: T[]): T | undefined {
    return items.reduce<T | undefined>((best, it) => (!best || it.updatedAt > best.updatedAt ? it : best), undefined);
  }
  function indexBy<T extends HasId, K extends keyof T = 'id'>(items: T[], key?: K): Map<T[K], T> {
    const m = new Map<T[K], T>();
    for (const it of items) m.set(it[key ?? ('id' as K)], it);
    return m;
  }
  type Doc = HasId & HasUpdated & { title: string };
  const docs: Doc[] = await codemode.drive_list_files({ folder: 'specs' });
  return { newest: newest(docs)?.title, byTitle: [...indexBy(docs, 'title').keys()] };
}
