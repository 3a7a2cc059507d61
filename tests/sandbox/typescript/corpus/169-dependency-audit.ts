// Check the direct dependencies of a package.json against the registry:
// outdated majors, deprecated packages, and licenses we don't accept.
async () => {
  interface PackageJson {
    name: string;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  }
  interface RegistryInfo {
    name: string;
    'dist-tags': { latest: string; [tag: string]: string };
    license?: string | { type: string };
    deprecated?: string;
  }
  type Finding =
    | { kind: 'outdated'; pkg: string; wanted: string; latest: string }
    | { kind: 'deprecated'; pkg: string; reason: string }
    | { kind: 'license'; pkg: string; license: string };

  const ALLOWED = new Set<string>(['MIT', 'ISC', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD']);
  const major = (range: string): number => Number(/(\d+)/.exec(range)?.[1] ?? NaN);

  const pkg: PackageJson = JSON.parse(await codemode.fs_read_file({ path: 'package.json' }));
  const deps: [string, string][] = [
    ...Object.entries(pkg.dependencies ?? {}),
    ...Object.entries(pkg.devDependencies ?? {}),
  ];

  const findings: Finding[] = [];
  const infos = await Promise.all(
    deps.map(async ([name, range]): Promise<[string, string, RegistryInfo | null]> => {
      try {
        return [name, range, (await codemode.npm_view({ name })) as RegistryInfo];
      } catch {
        return [name, range, null];
      }
    }),
  );

  for (const [name, range, info] of infos) {
    if (!info) continue;
    const latest = info['dist-tags'].latest;
    if (major(latest) > major(range)) findings.push({ kind: 'outdated', pkg: name, wanted: range, latest });
    if (info.deprecated) findings.push({ kind: 'deprecated', pkg: name, reason: info.deprecated });
    const license = typeof info.license === 'object' ? info.license.type : info.license ?? 'UNKNOWN';
    if (!ALLOWED.has(license)) findings.push({ kind: 'license', pkg: name, license });
  }

  const by = <K extends Finding['kind']>(kind: K) =>
    findings.filter((f): f is Extract<Finding, { kind: K }> => f.kind === kind);

  return {
    checked: deps.length,
    unreachable: infos.filter(([, , i]) => i === null).map(([n]) => n),
    outdated: by('outdated').map((f) => `${f.pkg} ${f.wanted} -> ${f.latest}`),
    deprecated: by('deprecated').map((f) => `${f.pkg}: ${f.reason}`),
    licenses: by('license').map((f) => `${f.pkg}: ${f.license}`),
  };
}
