async () => {
  interface SearchOptions {
    query: string;
    limit?: number;
    sort?: 'relevance' | 'date';
    filters?: { lang?: string; after?: string };
  }
  async function search({ query, limit = 10, sort = 'relevance', filters: { lang = 'en', after } = {} }: SearchOptions): Promise<string[]> {
    const res = await codemode.search_web({ q: query, count: limit, sort, lang, after });
    return res.results.map((r: { title: string; url: string }) => `${r.title} — ${r.url}`);
  }

  const [a, b = 'none', ...rest]: string[] = await search({ query: 'type stripping javascript', limit: 5 });
  const { length }: { length: number } = rest;
  return { a, b, more: length };
}
