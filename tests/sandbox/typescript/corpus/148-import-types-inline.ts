type FsModule = typeof import('node:fs');
type Stats = import('node:fs').Stats;
type ReadOpts = Parameters<FsModule['readFileSync']>[1];

const stat: Pick<Stats, 'size' | 'mtimeMs'> = await codemode.fs_stat({ path: 'db.sqlite' });
const opts: ReadOpts = { encoding: 'utf8' };
let lastModule: import('node:path').PlatformPath | null = null;
return { mb: (stat.size / 2 ** 20).toFixed(1), modified: new Date(stat.mtimeMs).toISOString(), opts, lastModule };
