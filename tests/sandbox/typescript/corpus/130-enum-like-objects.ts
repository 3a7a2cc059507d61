const Status = {
  Active: 'active',
  Suspended: 'suspended',
  Deleted: 'deleted',
} as const;
type Status = (typeof Status)[keyof typeof Status];

const Level = Object.freeze({ Low: 1, High: 2 } as const);
type Level = typeof Level[keyof typeof Level];

const accounts: { id: string; status: Status; level: Level }[] = await codemode.admin_list_accounts({});
const suspended = accounts.filter((a) => a.status === Status.Suspended && a.level >= Level.High);
return suspended.map((a) => a.id);
