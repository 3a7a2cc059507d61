async () => {
  const res = await codemode.http_get_json({ url: 'https://api.example.com/settings' });
  const { theme = 'light' as 'light' | 'dark', pageSize = 25 as number, beta = false } = res as {
    theme?: 'light' | 'dark';
    pageSize?: number;
    beta?: boolean;
  };
  const [first = '' as string, ...rest] = (res.recent ?? []) as string[];
  return { theme, pageSize, beta, first, rest: rest.length };
}
