async () => {
  const r = await codemode.http_get({ url: "https://example.com/robots.txt" });
  const rules = r.body.split(/\r?\n/).filter((l) => /^disallow:/i.test(l));
  return rules.map((l) => l.split(":")[1].trim());
}
