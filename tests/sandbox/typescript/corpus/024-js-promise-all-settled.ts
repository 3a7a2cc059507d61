async () => {
  const hosts = ['a.example.com', 'b.example.com', 'c.example.com'];
  const results = await Promise.allSettled(hosts.map((host) => codemode.dns_lookup({ host })));
  return results.map((r, i) =>
    r.status === 'fulfilled' ? `${hosts[i]} -> ${r.value.address}` : `${hosts[i]} failed: ${r.reason}`,
  );
}
