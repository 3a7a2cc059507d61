let token!: string;
let expires!: Date;
let attempts: number = 0;

async function login(): Promise<void> {
  const r = await codemode.auth_login({ client_id: 'cli' });
  token = r.access_token;
  expires = new Date(Date.now() + r.expires_in * 1000);
}

while (!token && attempts++ < 3) {
  await login();
}
return { ok: Boolean(token), expires: expires?.toISOString() };
