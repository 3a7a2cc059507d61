async () => {
  type JsonSchema =
    | { type: 'string'; enum?: string[]; minLength?: number }
    | { type: 'number' | 'integer'; minimum?: number; maximum?: number }
    | { type: 'boolean' }
    | { type: 'array'; items: JsonSchema }
    | { type: 'object'; properties: Record<string, JsonSchema>; required?: string[] };

  function validate(v: unknown, s: JsonSchema, path = '$'): string[] {
    switch (s.type) {
      case 'string':
        if (typeof v !== 'string') return [`${path}: expected string`];
        return s.enum && !s.enum.includes(v) ? [`${path}: not one of ${s.enum.join('|')}`] : [];
      case 'number':
      case 'integer':
        if (typeof v !== 'number') return [`${path}: expected number`];
        return s.type === 'integer' && !Number.isInteger(v) ? [`${path}: expected integer`] : [];
      case 'boolean':
        return typeof v === 'boolean' ? [] : [`${path}: expected boolean`];
      case 'array':
        return Array.isArray(v) ? v.flatMap((x, i) => validate(x, s.items, `${path}[${i}]`)) : [`${path}: expected array`];
      case 'object': {
        if (typeof v !== 'object' || v === null) return [`${path}: expected object`];
        const o = v as Record<string, unknown>;
        const missing = (s.required ?? []).filter((k) => !(k in o)).map((k) => `${path}.${k}: required`);
        return missing.concat(Object.entries(s.properties).flatMap(([k, ps]) => (k in o ? validate(o[k], ps, `${path}.${k}`) : [])));
      }
    }
  }

  const schema: JsonSchema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name'] };
  const records: unknown[] = await codemode.kv_list_values({ prefix: 'person:' });
  return records.map((r, i) => ({ i, errors: validate(r, schema) })).filter((r) => r.errors.length);
}
