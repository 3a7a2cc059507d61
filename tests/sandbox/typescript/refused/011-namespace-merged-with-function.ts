// refused: namespace at 5
function greet(name: string): string {
  return `${greet.prefix} ${name}`;
}
namespace greet {
  export const prefix = 'Hello';
}
return greet((await codemode.auth_whoami({})).login);
