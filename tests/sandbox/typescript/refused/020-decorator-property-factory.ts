// refused: decorator at 6
const field = (name: string) => (_v: undefined, _ctx: ClassFieldDecoratorContext) => (init: unknown) => init ?? name;
async () => {
  const email: string = '@not-a-decorator';
  class Form {
    @field('email') email: string = '';
  }
  return { email, form: new Form() };
}
