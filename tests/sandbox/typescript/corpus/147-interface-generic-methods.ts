async () => {
  interface Client {
    get<T>(path: string): Promise<T>;
    post<T, B = unknown>(path: string, body: B): Promise<T>;
    paginate<T>(path: string, opts?: { pageSize?: number }): AsyncIterable<T>;
    close?(): void;
  }

  const client: Client = {
    get: (path) => codemode.http_get_json({ url: `https://api.example.com${path}` }),
    post: (path, body) => codemode.http_post_json({ url: `https://api.example.com${path}`, body }),
    async *paginate<T>(path: string): AsyncIterable<T> {
      for (let page = 1; page < 4; page++) {
        const items: T[] = await codemode.http_get_json({ url: `https://api.example.com${path}?page=${page}` });
        if (!items.length) return;
        yield* items;
      }
    },
  };

  const me = await client.get<{ id: number }>('/me');
  let n = 0;
  for await (const _ of client.paginate<{ id: number }>(`/users/${me.id}/repos`)) n++;
  client.close?.();
  return n;
}
