// refused: export = at 8
async function main(): Promise<string> {
  const r = await codemode.git_status({});
  return JSON.stringify(r);
}
type Main = typeof main;
const entry: Main = main;
export = entry;
