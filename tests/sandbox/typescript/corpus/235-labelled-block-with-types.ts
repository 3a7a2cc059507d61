const config: Record<string, unknown> = await codemode.kv_get({ key: 'pipeline' });
let verdict: 'ok' | 'invalid' = 'ok';
validate: {
  type Stage = { name: string; timeout?: number };
  const stages = config.stages as Stage[] | undefined;
  if (!Array.isArray(stages)) {
    verdict = 'invalid';
    break validate;
  }
  for (const s of stages) {
    if (typeof s.name !== 'string' || (s.timeout !== undefined && s.timeout <= 0)) {
      verdict = 'invalid';
      break validate;
    }
  }
}
return verdict;
