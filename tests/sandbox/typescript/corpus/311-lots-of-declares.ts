declare const VERSION: string;
declare let counter: number;
declare function log(...args: unknown[]): void;
declare class Logger {
  level: string;
  log(msg: string): void;
}
declare namespace Tools {
  const all: string[];
  function call(name: string, input: unknown): Promise<unknown>;
}
declare module 'codemode' {
  export function call(name: string, input: unknown): Promise<unknown>;
}
declare global {
  interface Window { codemode: unknown }
}
declare enum Mode { Fast, Slow }

const names: string[] = await codemode.tools_list({});
return names.filter((n) => n.startsWith('git_'));
