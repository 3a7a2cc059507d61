async () => {
  type Message = { user: string; text: string; ts: string; reactions?: { name: string; count: number }[] };
  const channels: readonly string[] = ['#incidents', '#deploys', '#support'] as const;
  const digest: string[] = [];
  for (const channel of channels) {
    const msgs: Message[] = await codemode.slack_history({ channel, limit: 100, oldest: Date.now() / 1000 - 86400 });
    const popular = msgs
      .map((m) => ({ m, score: (m.reactions ?? []).reduce((s, r) => s + r.count, 0) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 2);
    digest.push(`*${channel}* (${msgs.length} messages)`);
    for (const { m, score } of popular) digest.push(`  • ${m.text.slice(0, 80)} [${score}]`);
  }
  await codemode.slack_post_message({ channel: '#daily-digest', text: digest.join('\n') });
  return digest.length;
}
