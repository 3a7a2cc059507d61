async () => {
  interface Rule { agent: string; disallow: string[] }
  const r: { body: string } = await codemode.http_get({ url: "https://example.com/robots.txt" });
  const rules: Rule[] = [];
  let current: Rule | undefined;
  for (const line of r.body.split(/\r?\n/) as string[]) {
    const [k, v = ""] = line.split(":").map((s) => s.trim()) as [string, string?];
    if (/^user-agent$/i.test(k)) rules.push((current = { agent: v, disallow: [] }));
    else if (/^disallow$/i.test(k) && current) current!.disallow.push(v);
  }
  type Summary = Record<string, number>;
  return Object.fromEntries(rules.map((x) => [x.agent, x.disallow.length])) as Summary;
}
