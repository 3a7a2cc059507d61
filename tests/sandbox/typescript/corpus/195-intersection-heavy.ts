async () => {
  type WithId = { id: string };
  type WithTimestamps = { createdAt: Date; updatedAt: Date };
  type SoftDelete = { deletedAt?: Date | null };
  type Entity<T> = T & WithId & WithTimestamps & SoftDelete;
  type Article = Entity<{ title: string; body: string; tags: string[] }>;

  const raw: Array<Omit<Article, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string }> =
    await codemode.cms_list_articles({ status: 'published' });
  const articles: Article[] = raw.map((a) => ({ ...a, createdAt: new Date(a.createdAt), updatedAt: new Date(a.updatedAt) }));
  const live = articles.filter((a) => !a.deletedAt);
  const stale = live.filter((a) => Date.now() - a.updatedAt.getTime() > 365 * 864e5);
  return stale.map((a): Pick<Article, 'id' | 'title'> => ({ id: a.id, title: a.title }));
}
