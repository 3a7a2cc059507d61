async () => {
  type Rule = { pattern: RegExp; severity: 'low' | 'high'; message: string };

  const RULES = [
    { pattern: /AKIA[0-9A-Z]{16}/, severity: 'high', message: 'AWS access key' },
    { pattern: /-----BEGIN (RSA )?PRIVATE KEY-----/, severity: 'high', message: 'private key' },
    { pattern: /password\s*=\s*['"][^'"]+['"]/i, severity: 'low', message: 'hard-coded password' },
  ] as const satisfies readonly Rule[];

  const files: string[] = await codemode.git_ls_files({ pattern: '*.env*' });
  const findings: { file: string; message: (typeof RULES)[number]['message'] }[] = [];
  for (const file of files) {
    const text: string = await codemode.fs_read_file({ path: file });
    for (const rule of RULES) if (rule.pattern.test(text)) findings.push({ file, message: rule.message });
  }
  return findings;
}
