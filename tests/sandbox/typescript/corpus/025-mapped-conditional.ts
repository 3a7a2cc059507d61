async () => {
  type Nullable<T> = { [K in keyof T]: T[K] | null };
  type Unwrap<T> = T extends Promise<infer U> ? U : T;
  type ElementOf<A> = A extends readonly (infer E)[] ? E : never;

  type Fetched = Unwrap<ReturnType<typeof codemode.crm_list_contacts>>;
  type Contact = ElementOf<Fetched>;

  const contacts: Contact[] = await codemode.crm_list_contacts({ limit: 100 });
  const cleaned = contacts.map((c): Nullable<{ name: string; phone: string }> => ({
    name: c.name?.trim() || null,
    phone: c.phone?.replace(/[^\d+]/g, '') || null,
  }));
  return cleaned.filter((c) => c.phone !== null).length;
}
