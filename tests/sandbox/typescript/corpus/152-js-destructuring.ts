async () => {
  const { data: { viewer: { login, repositories: { totalCount, nodes = [] } = {} } = {} } = {} } =
    await codemode.github_graphql({ query: '{ viewer { login repositories(first: 5) { totalCount nodes { name } } } }' });
  const [first, second = null, ...others] = nodes;
  return { login, totalCount, first: first?.name, second: second?.name, others: others.length };
}
