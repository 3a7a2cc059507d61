async () => {
  interface Queue<T> {
    push(item: T): void;
    pop(): T | undefined;
    readonly length: number;
  }
  class PriorityQueue<T> implements Queue<T> {
    private heap: { item: T; p: number }[] = [];
    constructor(private_score: (item: T) => number) {
      this.score = private_score;
    }
    private score: (item: T) => number;
    get length(): number {
      return this.heap.length;
    }
    push(item: T): void {
      this.heap.push({ item, p: this.score(item) });
      this.heap.sort((a, b) => b.p - a.p);
    }
    pop(): T | undefined {
      return this.heap.shift()?.item;
    }
  }
  type Ticket = { key: string; priority: number; ageDays: number };
  const q: Queue<Ticket> = new PriorityQueue<Ticket>((t) => t.priority * 10 + t.ageDays);
  for (const t of (await codemode.jira_search({ jql: 'status = Open' })).issues as Ticket[]) q.push(t);
  const next: string[] = [];
  while (q.length && next.length < 5) next.push(q.pop()!.key);
  return next;
}
