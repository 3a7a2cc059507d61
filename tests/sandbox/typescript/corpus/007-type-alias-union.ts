type Status = 'pending' | 'running' | 'done' | 'failed';
type Job = { id: string; status: Status; startedAt?: number };

const jobs: Job[] = await codemode.ci_list_jobs({ pipeline: 'main' });
const counts = new Map<Status, number>();
for (const job of jobs) {
  counts.set(job.status, (counts.get(job.status) ?? 0) + 1);
}
return Object.fromEntries(counts);
