async () => {
  type Method = 'GET' | 'POST' | 'DELETE';
  type Route = `/api/${string}`;
  type Endpoint = `${Method} ${Route}`;
  type EventName<T extends string> = `on${Capitalize<T>}`;

  const endpoints: Endpoint[] = ['GET /api/users', 'POST /api/users', 'DELETE /api/users/1'];
  const handlerName: EventName<'click'> = 'onClick';
  const results: string[] = [];
  for (const e of endpoints) {
    const [method, route] = e.split(' ') as [Method, Route];
    const r = await codemode.http_request({ method, url: `https://api.example.com${route.slice(4)}` });
    results.push(`${method} ${route} -> ${r.status}`);
  }
  return { handlerName, results };
}
