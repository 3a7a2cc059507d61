const query: string = 'WebAssembly component model status';
const hits: { title: string; url: string; snippet: string }[] = (await codemode.search_web({ q: query, count: 8 })).results;
const pages = await Promise.all(
  hits.slice(0, 4).map(async (h) => ({ ...h, text: ((await codemode.http_get({ url: h.url })).body as string).replace(/<[^>]+>/g, ' ').slice(0, 4000) })),
);
const summary: string = await codemode.llm_summarize({ texts: pages.map((p) => p.text), max_words: 150 });
return { summary, sources: pages.map((p) => p.url) };
