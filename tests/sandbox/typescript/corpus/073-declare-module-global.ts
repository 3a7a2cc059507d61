declare module 'left-pad' {
  function leftPad(s: string, n: number, ch?: string): string;
  export = leftPad;
}
declare namespace Codemode {
  interface ToolResult<T = unknown> {
    ok: boolean;
    data: T;
  }
  function call<T>(name: string, input: object): Promise<ToolResult<T>>;
}
declare enum Color { Red, Green }
declare const enum Shade { Light = 1, Dark = 2 }

const r: Codemode.ToolResult<string[]> = await codemode.kv_list({ prefix: 'user:' });
return r.ok ? r.data.length : 0;
