// refused: enum at 9
async () => {
  interface Job {
    id: string;
    state: string;
  }
  const jobs: Job[] = await codemode.ci_list_jobs({ pipeline: 'main' });
  // map the states
  enum State {
    Queued = 'queued',
    Running = 'running',
    Done = 'done',
  }
  return jobs.filter((j) => j.state === State.Running).length;
}
