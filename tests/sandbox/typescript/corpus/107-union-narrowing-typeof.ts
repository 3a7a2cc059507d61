async () => {
  type Input = string | number | boolean | null | undefined | Date | string[];
  function normalize(v: Input): string {
    if (v == null) return '';
    if (typeof v === 'string') return v.trim();
    if (typeof v === 'number') return Number.isFinite(v) ? v.toString() : 'NaN';
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    if (v instanceof Date) return v.toISOString().slice(0, 10);
    return v.map(normalize).join('; ');
  }
  const form: Record<string, Input> = await codemode.forms_get_response({ form: 'onboarding', id: 77 });
  return Object.fromEntries(Object.entries(form).map(([k, v]) => [k, normalize(v)]));
}
