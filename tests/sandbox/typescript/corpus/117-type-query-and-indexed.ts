async () => {
  const endpoints = {
    users: { path: '/users', method: 'GET' },
    createUser: { path: '/users', method: 'POST' },
    deleteUser: { path: '/users/:id', method: 'DELETE' },
  } as const;
  type Endpoints = typeof endpoints;
  type Name = keyof Endpoints;
  type MethodOf<N extends Name> = Endpoints[N]['method'];
  type AllMethods = Endpoints[Name]['method'];
  type Last<T extends readonly unknown[]> = T extends readonly [...unknown[], infer L] ? L : never;

  const m: MethodOf<'createUser'> = 'POST';
  const methods: AllMethods[] = Object.values(endpoints).map((e) => e.method);
  const last: Last<[1, 2, 3]> = 3;
  const r = await codemode.http_request({ method: endpoints.users.method, url: 'https://api.example.com' + endpoints.users.path });
  return { m, methods, last, status: r.status };
}
