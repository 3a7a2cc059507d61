class Tally {
  #counts = new Map();
  add(key, n = 1) {
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + n);
    return this;
  }
  get top() {
    return [...this.#counts].sort((a, b) => b[1] - a[1])[0];
  }
  static from(items) {
    const t = new Tally();
    for (const i of items) t.add(i);
    return t;
  }
}
const issues = await codemode.github_list_issues({ repo: 'acme/api', state: 'all', per_page: 100 });
return Tally.from(issues.map((i) => i.user.login)).top;
