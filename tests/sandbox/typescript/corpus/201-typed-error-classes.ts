async () => {
  class ToolError extends Error {
    override readonly name: string = 'ToolError';
    constructor(message: string, readonly_tool: string, public_code?: number) {
      super(message);
      this.tool = readonly_tool;
      this.code = public_code;
    }
    readonly tool: string;
    code?: number;
  }
  class NotFound extends ToolError {
    override readonly name = 'NotFound';
  }

  async function call<T>(tool: string, input: object): Promise<T> {
    try {
      return await (codemode as any)[tool](input);
    } catch (e: any) {
      if (e?.code === 404) throw new NotFound(e.message, tool, 404);
      throw new ToolError(String(e?.message ?? e), tool, e?.code);
    }
  }

  try {
    return await call<{ body: string }>('http_get', { url: 'https://example.com/missing' });
  } catch (e) {
    if (e instanceof NotFound) return { missing: true };
    if (e instanceof ToolError) return { failed: e.tool, code: e.code ?? null };
    throw e;
  }
}
