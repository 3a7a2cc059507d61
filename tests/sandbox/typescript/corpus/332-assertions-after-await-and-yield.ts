async () => {
  interface Build { id: number; status: 'passed' | 'failed' }
  const latest = <Build>await codemode.ci_latest_build({ branch: 'main' });
  const previous = await <Promise<Build>>codemode.ci_build({ id: latest.id - 1 });
  function* statuses(builds: unknown[]): Generator<Build['status']> {
    for (const b of builds) yield <Build['status']>(b as Build).status;
  }
  return [...statuses([latest, previous])];
}
