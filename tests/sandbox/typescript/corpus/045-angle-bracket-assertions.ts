const raw = await codemode.fs_read_file({ path: 'package.json' });
const pkg = <{ name: string; version: string; dependencies?: Record<string, string> }>JSON.parse(raw);
const deps = Object.keys(<Record<string, string>>(pkg.dependencies ?? {}));
const major = (<string>pkg.version).split('.')[0];
return `${pkg.name}@${major}.x with ${deps.length} deps`;
