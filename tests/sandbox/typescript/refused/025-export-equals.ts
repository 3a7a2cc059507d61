// refused: export = at 5
interface Api {
  call(name: string): Promise<unknown>;
}
export = {
  call: (name: string) => (codemode as any)[name]({}),
} as Api;
