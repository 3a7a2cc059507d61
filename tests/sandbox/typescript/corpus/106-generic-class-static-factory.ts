async () => {
  class Box<T> {
    private constructor(private_value: T) {
      this.value = private_value;
    }
    readonly value: T;
    static of<U>(value: U): Box<U> {
      return new Box<U>(value);
    }
    map<U>(fn: (v: T) => U): Box<U> {
      return Box.of(fn(this.value));
    }
    async then2<U>(fn: (v: T) => Promise<U>): Promise<Box<U>> {
      return Box.of(await fn(this.value));
    }
  }

  const boxed = await Box.of('acme/api')
    .map((repo) => repo.split('/') as [owner: string, name: string])
    .then2(([owner, repo]) => codemode.github_get_repo({ owner, repo }));
  return boxed.map((r: { open_issues_count: number }) => r.open_issues_count).value;
}
