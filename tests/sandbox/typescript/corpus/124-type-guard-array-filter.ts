async () => {
  const isDefined = <T,>(v: T | null | undefined): v is T => v != null;
  const isString = (v: unknown): v is string => typeof v === 'string';

  const ids: (string | null)[] = await codemode.crm_search_ids({ q: 'churn risk' });
  const details = await Promise.all(ids.filter(isDefined).map((id) => codemode.crm_get_contact({ id }).catch(() => null)));
  const emails = details.filter(isDefined).map((d) => d.email as unknown).filter(isString);
  return emails;
}
