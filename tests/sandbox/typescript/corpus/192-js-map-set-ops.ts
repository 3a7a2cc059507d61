async () => {
  const [a, b] = await Promise.all([
    codemode.github_list_collaborators({ repo: 'acme/api' }),
    codemode.github_list_collaborators({ repo: 'acme/web' }),
  ]);
  const sa = new Set(a.map((u) => u.login));
  const sb = new Set(b.map((u) => u.login));
  const both = [...sa].filter((x) => sb.has(x));
  const onlyApi = [...sa].filter((x) => !sb.has(x));
  const onlyWeb = [...sb].filter((x) => !sa.has(x));
  return { both, onlyApi, onlyWeb };
}
