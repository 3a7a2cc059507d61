declare const userIdBrand: unique symbol;
type UserId = string & { readonly [userIdBrand]: true };

const asUserId = (s: string): UserId => s as UserId;

const sessions = await codemode.auth_list_sessions({ active: true });
const ids: UserId[] = sessions.map((s: { user: string }) => asUserId(s.user));
const unique = new Set<UserId>(ids);
return unique.size;
