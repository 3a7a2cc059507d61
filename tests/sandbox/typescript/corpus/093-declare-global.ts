declare global {
  interface Array<T> {
    last?(): T | undefined;
  }
  var __runId: string | undefined;
}

globalThis.__runId = Math.random().toString(36).slice(2);
const jobs: { id: string }[] = await codemode.batch_list_jobs({ state: 'queued' });
return { run: globalThis.__runId, queued: jobs.length };
