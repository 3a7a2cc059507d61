async () => {
  class Registry {
    static readonly tools: Map<string, { calls: number }> = new Map();
    static defaultTool: string;
    static {
      const initial: string[] = ['search', 'fetch', 'summarize'];
      for (const t of initial) Registry.tools.set(t, { calls: 0 });
      Registry.defaultTool = initial[0] as string;
    }
    static record(name: string): void {
      const e = Registry.tools.get(name) ?? { calls: 0 };
      e.calls++;
      Registry.tools.set(name, e);
    }
  }
  const history: { tool: string }[] = await codemode.audit_tool_calls({ hours: 24 });
  history.forEach((h) => Registry.record(h.tool));
  return Object.fromEntries([...Registry.tools].map(([k, v]) => [k, v.calls]));
}
