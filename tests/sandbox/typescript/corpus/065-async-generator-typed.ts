async () => {
  interface Page<T> { items: T[]; next?: string }
  interface Build { id: number; status: 'passed' | 'failed' | 'running'; branch: string }

  async function* paginate<T>(fetchPage: (cursor?: string) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
    let cursor: string | undefined;
    do {
      const page: Page<T> = await fetchPage(cursor);
      yield* page.items;
      cursor = page.next;
    } while (cursor);
  }

  const failedByBranch: Record<string, number> = {};
  let seen = 0;
  for await (const build of paginate<Build>((cursor) => codemode.ci_list_builds({ cursor, per_page: 50 }))) {
    if (++seen > 300) break;
    if (build.status === 'failed') failedByBranch[build.branch] = (failedByBranch[build.branch] ?? 0) + 1;
  }
  return failedByBranch;
}
