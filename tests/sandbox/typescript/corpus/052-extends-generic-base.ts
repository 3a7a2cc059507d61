class Repository<T extends { id: string }> {
  protected items: T[] = [];
  add(item: T): this {
    this.items.push(item);
    return this;
  }
  find(id: string): T | undefined {
    return this.items.find((i) => i.id === id);
  }
}

interface Incident { id: string; severity: 1 | 2 | 3; title: string }

class IncidentRepo extends Repository<Incident> {
  critical(): Incident[] {
    return this.items.filter((i) => i.severity === 1);
  }
}

const repo = new IncidentRepo();
for (const i of await codemode.pager_list_incidents({ status: 'triggered' })) repo.add(i as Incident);
return repo.critical().map((i) => i.title);
