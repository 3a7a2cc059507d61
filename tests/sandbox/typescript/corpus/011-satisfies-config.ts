type Env = 'dev' | 'staging' | 'prod';
interface Target { url: string; replicas: number }

const targets = {
  dev: { url: 'http://localhost:8080', replicas: 1 },
  staging: { url: 'https://staging.example.com', replicas: 2 },
  prod: { url: 'https://example.com', replicas: 6 },
} satisfies Record<Env, Target>;

const statuses = await Promise.all(
  (Object.keys(targets) as Env[]).map(async (env) => {
    const r = await codemode.http_get({ url: targets[env].url + '/healthz' });
    return { env, ok: r.status === 200 };
  }),
);
return statuses;
