interface Options {
  verbose: boolean;
}
interface Options {
  dryRun?: boolean;
}
interface Options {
  targets: string[];
}
type Partial2<T> = { [P in keyof T]?: T[P] };

const given: Partial2<Options> = await codemode.settings_get({ scope: 'sync' });
const options: Options = { verbose: false, targets: [], ...given };
const results: string[] = [];
for (const t of options.targets) {
  if (options.dryRun) results.push(`would sync ${t}`);
  else results.push((await codemode.rsync({ target: t, verbose: options.verbose })).summary);
}
return results;
