type Mood = '😀' | '😐' | '😢';
type Greeting = 'こんにちは' | 'Grüß Gott' | 'Привет';
const moods: Record<Mood, string> = { '😀': 'good', '😐': 'meh', '😢': 'bad' };
const survey: { mood: Mood; lang: Greeting }[] = await codemode.survey_results({ form: 'pulse' });
const tally = survey.reduce<Partial<Record<Mood, number>>>((acc, s) => {
  acc[s.mood] = (acc[s.mood] ?? 0) + 1;
  return acc;
}, {});
return Object.entries(tally).map(([m, n]) => `${m} ${moods[m as Mood]}: ${n}`);
