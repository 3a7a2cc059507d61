import type { Octokit } from '@octokit/rest';
import type * as Fs from 'node:fs';

type Repo = Awaited<ReturnType<Octokit['repos']['get']>>['data'];
type Stats = Fs.Stats;

const repo: Repo = await codemode.github_get_repo({ owner: 'acme', repo: 'api' });
const stats: Partial<Stats> = { size: repo.size };
return `${repo.full_name} has ${repo.stargazers_count} stars, size ${stats.size} KB`;
