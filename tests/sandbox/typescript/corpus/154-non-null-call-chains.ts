async () => {
  const registry = new Map<string, { handler?: (input: string) => string; next?: () => string }>();
  registry.set('upper', { handler: (s) => s.toUpperCase(), next: () => 'lower' });
  const doc: { text: string } = await codemode.fs_read_json({ path: 'doc.json' });
  const a = registry.get('upper')!.handler!(doc.text);
  const b = (registry.get('upper') ?? registry.get('x'))!.next!();
  const c = registry.get('upper')?.handler!(doc.text)!.length;
  const d = [registry]!.at(0)!.size!;
  return { a: a.slice(0, 20), b, c, d };
}
