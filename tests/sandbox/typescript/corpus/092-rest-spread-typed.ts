async () => {
  function merge<T extends object>(...parts: Partial<T>[]): Partial<T> {
    return Object.assign({}, ...parts);
  }
  const log = (level: 'info' | 'warn', ...args: readonly unknown[]): void => {
    console[level](...args);
  };

  const [defaults, team, user] = await Promise.all([
    codemode.settings_get({ scope: 'global' }),
    codemode.settings_get({ scope: 'team:infra' }),
    codemode.settings_get({ scope: 'user:me' }),
  ]);
  const effective = merge<{ editor: string; tabWidth: number; telemetry: boolean }>(defaults, team, user);
  log('info', 'effective settings', effective);
  return effective;
}
