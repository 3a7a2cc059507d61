/** A user as the directory returns it. */
interface DirectoryUser {
  /** login name */
  uid: string;
  /** display name, may be empty */
  cn?: string;
  groups: string[];
}

/**
 * @param users all users
 * @param group group name
 */
function membersOf(users: DirectoryUser[], group: string): string[] {
  return users.filter((u) => u.groups.includes(group)).map((u) => u.cn || u.uid);
}

const users: DirectoryUser[] = await codemode.ldap_search({ base: 'ou=people,dc=example,dc=com', filter: '(objectClass=person)' });
return { admins: membersOf(users, 'admins'), oncall: membersOf(users, 'oncall') };
