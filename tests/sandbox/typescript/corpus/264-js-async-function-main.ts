async function main() {
  const feeds = ['https://blog.example.com/rss', 'https://news.example.org/feed'];
  const items = [];
  for (const url of feeds) {
    const r = await codemode.rss_fetch({ url });
    items.push(...r.items.slice(0, 3).map((i) => `${i.title} (${new URL(url).host})`));
  }
  return items;
}
