async () => {
  class Builder<T extends Record<string, unknown> = {}> {
    private fields: Partial<T> = {};
    set<K extends string, V>(this: Builder<T>, key: K, value: V): Builder<T & { [P in K]: V }> {
      (this.fields as Record<string, unknown>)[key] = value;
      return this as unknown as Builder<T & { [P in K]: V }>;
    }
    build(): T {
      return this.fields as T;
    }
  }
  const ticket = new Builder()
    .set('title', 'Disk almost full on db-2')
    .set('priority', 2)
    .set('labels', ['ops', 'storage'])
    .build();
  const created = await codemode.jira_create_issue({ project: 'OPS', fields: ticket });
  return created.key;
}
