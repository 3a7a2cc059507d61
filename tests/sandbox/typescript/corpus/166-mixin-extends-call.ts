async () => {
  type Constructor<T = {}> = new (...args: any[]) => T;
  function Serializable<TBase extends Constructor>(Base: TBase) {
    return class Serializable extends Base {
      serialize(): string {
        return JSON.stringify(this);
      }
    };
  }
  function Activatable<TBase extends Constructor<{ name: string }>>(Base: TBase) {
    return class extends Base {
      active: boolean = false;
      activate(): this {
        this.active = true;
        return this;
      }
    };
  }
  class User {
    name: string = '';
  }
  class SmartUser extends Serializable(Activatable(User)) {}
  const u = new SmartUser();
  u.name = (await codemode.auth_whoami({})).login;
  return u.activate().serialize();
}
