async () => {
  class Job {
    constructor(status: number) {
      this.status = status;
    }
    private status: number;
    get state():
      | 'queued'
      | 'running'
      | 'done' {
      return this.status === 0 ? 'queued' : this.status === 1 ? 'running' : 'done';
    }
  }
  const raw: number[] = await codemode.batch_job_statuses({ batch: 'nightly' });
  return raw.map((s) => new Job(s).state);
}
