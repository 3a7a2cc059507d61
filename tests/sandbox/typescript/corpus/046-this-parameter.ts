async () => {
  interface Counter {
    count: number;
    label: string;
  }
  function increment(this: Counter, by: number = 1): string {
    this.count += by;
    return `${this.label}: ${this.count}`;
  }

  const c: Counter = { count: 0, label: 'issues' };
  const issues = await codemode.github_list_issues({ repo: 'acme/web', state: 'open' });
  let last = '';
  for (const _ of issues) last = increment.call(c, 1);
  return last;
}
