// refused: parameter property at 3
abstract class Base {
  constructor(protected readonly tool: string) {}
  abstract run(): Promise<unknown>;
}
class Git extends Base {
  run() {
    return (codemode as any)[this.tool]({});
  }
}
return new Git('git_status').run();
