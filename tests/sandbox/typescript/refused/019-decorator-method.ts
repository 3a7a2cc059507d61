// refused: decorator at 10
function log(_target: unknown, _ctx: ClassMethodDecoratorContext) {
  return function (this: unknown, ...args: unknown[]) {
    console.log('call', args);
  };
}
class Jobs {
  private count = 0;
  // decorated below
  @log
  async run(): Promise<number> {
    return ++this.count;
  }
}
return new Jobs().run();
