namespace Api {
  export interface User {
    id: number;
    login: string;
  }
  export type Users = User[];
  export namespace Errors {
    export type Code = 'not_found' | 'forbidden';
    export interface Body {
      code: Code;
      message: string;
    }
  }
}

const users: Api.Users = await codemode.github_list_collaborators({ repo: 'acme/api' });
const problem: Api.Errors.Body | null = users.length ? null : { code: 'not_found', message: 'no collaborators' };
return problem ?? users.map((u: Api.User) => u.login);
