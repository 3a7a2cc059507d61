async () => {
  const defaults = {
    timeoutMs: 5000,
    retries: 2,
    region: 'eu-west-1',
    verbose: false,
  };
  type Options = typeof defaults;
  type OptionKey = keyof Options;
  type RegionType = Options['region'];

  const overrides: Partial<Options> = await codemode.settings_get({ scope: 'deploy' });
  const merged: Options = { ...defaults, ...overrides };
  const changed = (Object.keys(merged) as OptionKey[]).filter((k) => merged[k] !== defaults[k]);
  const region: RegionType = merged.region;
  return { changed, region };
}
