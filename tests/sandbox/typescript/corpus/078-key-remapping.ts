async () => {
  type Getters<T> = {
    [K in keyof T as `get${Capitalize<string & K>}`]: () => T[K];
  };
  type Mutable<T> = { -readonly [K in keyof T]: T[K] };
  type Required2<T> = { [K in keyof T]-?: T[K] };
  type Optional<T> = { +readonly [K in keyof T]+?: T[K] };
  type WithoutKind<T> = { [K in keyof T as Exclude<K, 'kind'>]: T[K] };

  interface Settings {
    readonly theme: string;
    fontSize?: number;
    kind: 'settings';
  }

  const s: Settings = await codemode.settings_get({ user: 'me' });
  const getters = {
    getTheme: () => s.theme,
    getFontSize: () => s.fontSize,
    getKind: () => s.kind,
  } as Getters<Settings>;
  const m: Mutable<WithoutKind<Settings>> = { theme: s.theme, fontSize: s.fontSize };
  m.theme = 'dark';
  const r = { theme: 'x', fontSize: 12, kind: 'settings' } satisfies Required2<Settings>;
  const o: Optional<Settings> = {};
  return { theme: getters.getTheme(), m, r, o };
}
