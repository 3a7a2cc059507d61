// refused: type assertion at 10
async () => {
  interface Row {
    id: number;
    name: string;
    active: boolean;
  }
  const users: { id: number; login: string; suspended?: boolean }[] = await codemode.admin_list_users({ limit: 50 });
  // older TypeScript style: an asserted object literal as the arrow's body
  const rows = users.map((u) => <Row>{ id: u.id, name: u.login, active: !u.suspended });
  const inactive = rows.filter((r) => !r.active);
  return { total: rows.length, inactive: inactive.map((r) => r.name) };
}
