abstract class Step<I, O> {
  abstract readonly name: string;
  abstract run(input: I): Promise<O>;
  then<P>(next: Step<O, P>): Step<I, P> {
    const self = this;
    return new (class extends Step<I, P> {
      readonly name = `${self.name} → ${next.name}`;
      async run(input: I): Promise<P> {
        return next.run(await self.run(input));
      }
    })();
  }
}

class Fetch extends Step<string, string> {
  readonly name = 'fetch';
  async run(url: string): Promise<string> {
    return (await codemode.http_get({ url })).body;
  }
}
class CountLinks extends Step<string, number> {
  readonly name = 'count-links';
  async run(html: string): Promise<number> {
    return (html.match(/<a\s/gi) ?? []).length;
  }
}

const pipeline: Step<string, number> = new Fetch().then(new CountLinks());
return { name: pipeline.name, links: await pipeline.run('https://example.com') };
