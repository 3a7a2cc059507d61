declare var process: { env: { [k: string]: string | undefined } } | undefined;
type Required = 'API_URL' | 'API_TOKEN' | 'REGION';
const required: Required[] = ['API_URL', 'API_TOKEN', 'REGION'];
const env: Partial<Record<Required, string>> = await codemode.secrets_env({ app: 'ingest' });
const missing = required.filter((k) => !env[k]);
if (missing.length) return { ok: false, missing };
const url = new URL(env.API_URL!);
return { ok: true, host: url.host, region: env.REGION };
