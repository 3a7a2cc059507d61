async () => {
  class Api {
    base = 'https://api.example.com';
    getJson = async <T,>(path: string): Promise<
      T
    > => JSON.parse((await codemode.http_get({ url: this.base + path })).body) as T;
    list = (kind: string):
      Promise<string[]> => this.getJson<string[]>(`/${kind}`);
  }
  const api = new Api();
  const [users, teams] = await Promise.all([api.list('users'), api.list('teams')]);
  return { users: users.length, teams: teams.length };
}
