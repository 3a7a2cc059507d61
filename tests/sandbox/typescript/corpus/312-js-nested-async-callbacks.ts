async () => {
  const teams = await codemode.org_list_teams({ org: 'acme' });
  const result = await Promise.all(
    teams.map(async (team) => {
      const members = await codemode.org_team_members({ team: team.slug });
      const active = await Promise.all(
        members.map(async (m) => ({ login: m.login, active: (await codemode.github_user_events({ login: m.login })).length > 0 })),
      );
      return { team: team.slug, inactive: active.filter((a) => !a.active).map((a) => a.login) };
    }),
  );
  return result.filter((r) => r.inactive.length);
}
