async () => {
  interface Incident { id: string; title: string; service: string; opened: string; resolved?: string }
  interface Deploy { service: string; at: string; version: string }

  const since = new Date(Date.now() - 14 * 864e5).toISOString();
  const [incidents, deploys] = (await Promise.all([
    codemode.pager_list_incidents({ since }),
    codemode.deploy_history({ since }),
  ])) as [Incident[], Deploy[]];

  // Incidents opened within 2 hours after a deploy of the same service.
  const suspicious = incidents.flatMap((inc) => {
    const opened = Date.parse(inc.opened);
    const culprit = deploys.find(
      (d) => d.service === inc.service && opened - Date.parse(d.at) >= 0 && opened - Date.parse(d.at) < 2 * 3600_000,
    );
    return culprit ? [{ incident: inc.id, title: inc.title, version: culprit.version }] : [];
  });
  const mttr = incidents
    .filter((i): i is Required<Incident> => Boolean(i.resolved))
    .map((i) => (Date.parse(i.resolved) - Date.parse(i.opened)) / 60000);
  return {
    incidents: incidents.length,
    deploys: deploys.length,
    suspicious,
    mttrMinutes: mttr.length ? Math.round(mttr.reduce((a, b) => a + b) / mttr.length) : null,
  };
}
