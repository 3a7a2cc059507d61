declare function fetchTool(name: 'git_log', input: { max_count: number }): Promise<{ sha: string }[]>;
declare function fetchTool(name: 'git_status', input: {}): Promise<{ path: string; status: string }[]>;
declare function fetchTool(name: string, input: object): Promise<unknown>;

const status = (await codemode.git_status({})) as Awaited<ReturnType<typeof fetchTool>>;
const dirty = (status as { path: string; status: string }[]).filter((f) => f.status !== 'clean');
return dirty.map((f) => f.path);
