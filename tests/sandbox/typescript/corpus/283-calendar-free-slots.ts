async () => {
  type Slot = { start: number; end: number };
  const DAY_START = 9, DAY_END = 17;
  const people: string[] = ['ada@example.com', 'grace@example.com', 'linus@example.com'];
  const busy: Slot[] = (
    await Promise.all(people.map((p) => codemode.calendar_busy({ user: p, day: '2024-07-02' }) as Promise<{ start: string; end: string }[]>))
  )
    .flat()
    .map((b) => ({ start: new Date(b.start).getUTCHours() + new Date(b.start).getUTCMinutes() / 60, end: new Date(b.end).getUTCHours() + new Date(b.end).getUTCMinutes() / 60 }))
    .sort((a, b) => a.start - b.start);
  const free: Slot[] = [];
  let cursor = DAY_START;
  for (const b of busy) {
    if (b.start - cursor >= 0.5) free.push({ start: cursor, end: b.start });
    cursor = Math.max(cursor, b.end);
  }
  if (DAY_END - cursor >= 0.5) free.push({ start: cursor, end: DAY_END });
  const fmt = (h: number): string => `${String(Math.floor(h)).padStart(2, '0')}:${String(Math.round((h % 1) * 60)).padStart(2, '0')}`;
  return free.map((s) => `${fmt(s.start)}–${fmt(s.end)}`);
}
