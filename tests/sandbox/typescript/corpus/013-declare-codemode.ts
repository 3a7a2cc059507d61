declare const codemode: {
  slack_post_message(input: { channel: string; text: string }): Promise<{ ts: string }>;
  calendar_list_events(input: { from: string; to: string }): Promise<Array<{ title: string; start: string }>>;
};

const today = new Date().toISOString().slice(0, 10);
const events = await codemode.calendar_list_events({ from: today, to: today });
const text = events.length
  ? events.map((e) => `• ${e.start.slice(11, 16)} ${e.title}`).join('\n')
  : 'No meetings today';
const { ts } = await codemode.slack_post_message({ channel: '#standup', text });
return ts;
