type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type DeepPartial<T> = T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;
type Flatten<T> = T extends readonly (infer U)[] ? Flatten<U> : T;
type FirstArg<F> = F extends (first: infer A extends string, ...rest: any[]) => any ? A : never;
type Awaited2<T> = T extends PromiseLike<infer U> ? Awaited2<U> : T;
type PathOf<T> = T extends object
  ? { [K in keyof T & string]: K | `${K}.${PathOf<T[K]>}` }[keyof T & string]
  : never;

const doc: Json = await codemode.kv_get({ key: 'config' });
const patch: DeepPartial<{ server: { port: number; host: string } }> = { server: { port: 8081 } };
const flat: Flatten<number[][][]>[] = [1, 2, 3];
const arg: FirstArg<(name: string, n: number) => void> = 'x';
const path: PathOf<{ a: { b: { c: 1 } } }> = 'a.b.c';
const v: Awaited2<Promise<Promise<number>>> = 3;
return { doc, patch, flat, arg, path, v };
