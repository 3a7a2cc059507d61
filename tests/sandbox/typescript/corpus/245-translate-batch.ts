const strings: Record<string, string> = JSON.parse(await codemode.fs_read_file({ path: 'i18n/en.json' }));
const targets = ['de', 'fr', 'ja'] as const;
type Lang = (typeof targets)[number];
const out: { [L in Lang]?: Record<string, string> } = {};
for (const lang of targets) {
  const keys = Object.keys(strings);
  const translated: string[] = await codemode.translate({ texts: keys.map((k) => strings[k]!), target: lang });
  out[lang] = Object.fromEntries(keys.map((k, i) => [k, translated[i] ?? strings[k]!]));
  await codemode.fs_write_file({ path: `i18n/${lang}.json`, content: JSON.stringify(out[lang], null, 2) });
}
return Object.fromEntries(Object.entries(out).map(([l, m]) => [l, Object.keys(m!).length]));
