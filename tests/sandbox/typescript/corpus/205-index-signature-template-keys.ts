async () => {
  interface Env {
    [key: `VITE_${string}`]: string;
    [key: `FEATURE_${Uppercase<string>}`]: 'on' | 'off';
    NODE_ENV: 'development' | 'production';
  }
  const env = (await codemode.secrets_env({ app: 'web' })) as Env;
  const features = Object.entries(env)
    .filter(([k]) => k.startsWith('FEATURE_'))
    .map(([k, v]) => `${k.slice(8).toLowerCase()}=${v}`);
  return { mode: env.NODE_ENV, api: env['VITE_API_URL'], features };
}
