async () => {
  type Event =
    | { type: 'push'; ref: string; commits: number }
    | { type: 'pull_request'; action: 'opened' | 'closed'; number: number }
    | { type: 'issue_comment'; body: string };

  function describe(e: Event): string {
    switch (e.type) {
      case 'push':
        return `pushed ${e.commits} commit(s) to ${e.ref}`;
      case 'pull_request' as Event['type']:
        return `PR #${(e as Extract<Event, { type: 'pull_request' }>).number} ${(e as any).action}`;
      case 'issue_comment': {
        const body: string = e.body.length > 40 ? e.body.slice(0, 40) + '…' : e.body;
        return `commented: ${body}`;
      }
      default: {
        const never: never = e;
        return never;
      }
    }
  }

  const events: Event[] = await codemode.github_list_events({ repo: 'acme/web', per_page: 20 });
  return events.map(describe);
}
