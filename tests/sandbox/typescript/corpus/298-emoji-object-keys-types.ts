const reactions: { '👍': number; '🎉': number; '❤️': number } = await codemode.slack_reactions({ channel: '#launch', ts: '1717.42' });
type Emoji = keyof typeof reactions;
const top = (Object.keys(reactions) as Emoji[]).reduce((a, b) => (reactions[a] >= reactions[b] ? a : b));
const bar = (n: number): string => '█'.repeat(Math.min(20, n));
return (Object.entries(reactions) as [Emoji, number][]).map(([e, n]) => `${e} ${bar(n)} ${n}`).concat(`top: ${top}`);
