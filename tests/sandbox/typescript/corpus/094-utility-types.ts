async () => {
  interface Customer {
    id: string;
    name: string;
    email: string;
    plan: 'free' | 'pro' | 'enterprise';
    createdAt: string;
    internalNotes: string;
  }
  type PublicCustomer = Omit<Customer, 'internalNotes'>;
  type CustomerPatch = Partial<Pick<Customer, 'name' | 'email' | 'plan'>>;
  type ByPlan = Record<Customer['plan'], PublicCustomer[]>;
  type ReadonlyCustomer = Readonly<Required<PublicCustomer>>;
  type Keys = Extract<keyof Customer, `${string}At`>;

  const customers: Customer[] = await codemode.crm_list_customers({ limit: 200 });
  const byPlan: ByPlan = { free: [], pro: [], enterprise: [] };
  for (const { internalNotes: _drop, ...pub } of customers) byPlan[pub.plan].push(pub);
  const patch: CustomerPatch = { plan: 'pro' };
  const first: ReadonlyCustomer | undefined = byPlan.free[0];
  const k: Keys = 'createdAt';
  return { counts: Object.fromEntries(Object.entries(byPlan).map(([p, l]) => [p, l.length])), patch, first: first?.[k] };
}
