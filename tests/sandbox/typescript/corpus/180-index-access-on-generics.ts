async () => {
  interface ToolMap {
    git_log: { input: { max_count: number }; output: { sha: string; message: string }[] };
    git_status: { input: {}; output: { path: string; status: string }[] };
  }
  type ToolName = keyof ToolMap;
  type Input<N extends ToolName> = ToolMap[N]['input'];
  type Output<N extends ToolName> = ToolMap[N]['output'];

  async function call<N extends ToolName>(name: N, input: Input<N>): Promise<Output<N>> {
    return (codemode as Record<string, (i: unknown) => Promise<unknown>>)[name]!(input) as Promise<Output<N>>;
  }

  const log = await call('git_log', { max_count: 3 });
  const status = await call('git_status', {});
  return { head: log[0]?.sha, dirty: status.length };
}
