async () => {
  class Session {
    id!: string;
    private token!: string;
    user?: { login: string };
    protected expires!: Date
    started: number = Date.now()

    async open(): Promise<this> {
      const r = await codemode.auth_login({ client_id: 'codemode' });
      this.id = r.session_id;
      this.token = r.token;
      this.expires = new Date(r.expires_at);
      this.user = await codemode.auth_whoami({ token: this.token });
      return this;
    }
  }
  const s = await new Session().open();
  return { id: s.id, login: s.user?.login };
}
