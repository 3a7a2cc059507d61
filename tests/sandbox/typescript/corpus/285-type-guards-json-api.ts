async () => {
  interface ApiError { error: { code: string; message: string } }
  interface ApiList<T> { data: T[]; meta: { total: number } }
  type ApiResponse<T> = ApiError | ApiList<T>;
  const isError = (r: ApiResponse<unknown>): r is ApiError => 'error' in r;

  async function list<T>(path: string): Promise<T[]> {
    const r = JSON.parse((await codemode.http_get({ url: `https://api.example.com${path}` })).body) as ApiResponse<T>;
    if (isError(r)) throw new Error(`${r.error.code}: ${r.error.message}`);
    return r.data;
  }
  const [projects, members] = await Promise.all([list<{ id: string }>('/projects'), list<{ email: string }>('/members')]);
  return { projects: projects.length, members: members.map((m) => m.email) };
}
