async () => {
  abstract class Source {
    abstract fetch(): Promise<string[]>;
  }
  class Rss extends Source {
    async fetch(): Promise<string[]> {
      return (await codemode.rss_fetch({ url: 'https://blog.example.com/rss' })).items.map((i: { title: string }) => i.title);
    }
  }
  class Hn extends Source {
    async fetch(): Promise<string[]> {
      return (await codemode.hn_top({ n: 5 })).map((s: { title: string }) => s.title);
    }
  }
  const registry: Array<new () => Source> = [Rss, Hn];
  const all: typeof Source[] = registry;
  const titles = (await Promise.all(registry.map((C) => new C().fetch()))).flat();
  return { sources: all.length, titles };
}
