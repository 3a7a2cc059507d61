async () => {
  const notify = async (
    channel: string,
    text: string,
    opts: { thread?: string; mentions?: string[] } = {},
  ): Promise<string> => {
    const mention = (opts.mentions ?? []).map((m) => `<@${m}>`).join(' ');
    const r = await codemode.slack_post_message({ channel, text: `${mention} ${text}`.trim(), thread_ts: opts.thread });
    return r.ts as string;
  };

  const failed: { name: string; owner: string }[] = await codemode.ci_failed_jobs({ branch: 'main' });
  if (!failed.length) return 'all green';
  const ts = await notify('#ci', `${failed.length} job(s) failed on main`);
  for (const f of failed) await notify('#ci', `• ${f.name}`, { thread: ts, mentions: [f.owner] });
  return ts;
}
