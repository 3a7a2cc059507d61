async () => {
  class Resource {
    type: string = 'generic';
    abstract: boolean = false;
    readonly: boolean = true;
    declare(): string {
      return `${this.type} declared`;
    }
    namespace?: string;
    is(other: Resource): other is Resource {
      return other.type === this.type;
    }
    as<T>(): T {
      return this as unknown as T;
    }
    get module(): string {
      return this.namespace ?? 'default';
    }
  }
  const r = new Resource();
  r.namespace = (await codemode.kubectl_current_context({})).namespace;
  const o = { satisfies: 1, keyof: 'k', infer: true, type: 'obj' };
  return { d: r.declare(), same: r.is(new Resource()), m: r.module, as: r.as<{ type: string }>().type, o };
}
