declare function tool(name: 'search', input: { q: string }): Promise<{ hits: string[] }>;
declare function tool(name: 'fetch', input: { url: string }): Promise<{ body: string }>;
declare function tool<T = unknown>(name: string, input: object): Promise<T>;
declare class Tool<I, O> {
  constructor(name: string);
  call(input: I): Promise<O>;
  static list(): string[];
}
declare module '*.json' {
  const value: unknown;
  export default value;
}

const hits: string[] = (await codemode.search({ q: 'corral' })).hits;
return hits.slice(0, 3);
