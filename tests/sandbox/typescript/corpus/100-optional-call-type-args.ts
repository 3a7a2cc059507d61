async () => {
  type Hooks = {
    transform?: <T>(value: T) => T;
    validate?<T>(value: T): boolean;
  };
  const hooks: Hooks = await codemode.plugin_hooks({ name: 'normalizer' });
  const input = { email: ' Ada@Example.com ' };
  const out = hooks.transform?.<typeof input>(input) ?? input;
  const ok = hooks.validate?.<{ email: string }>(out) ?? true;
  return { out, ok };
}
