async () => {
  interface Entity {
    readonly id: string;
    createdAt: string;
  }
  interface User extends Entity {
    name: string;
    email?: string;
    roles: ReadonlyArray<string>;
  }
  interface Admin extends User, Entity {
    permissions: Set<string>;
  }

  const users: User[] = await codemode.db_query({ sql: 'select * from users limit 50' });
  const admins = users.filter((u): u is Admin => u.roles.includes('admin'));
  return admins.map((a) => a.name);
}
