type YMD = `${number}-${number}-${number}`;
const toYmd = (d: Date): YMD => d.toISOString().slice(0, 10) as YMD;
const addDays = (d: Date, n: number): Date => new Date(d.getTime() + n * 86_400_000);
function* daysBetween(from: Date, to: Date): Generator<YMD> {
  for (let d = from; d <= to; d = addDays(d, 1)) yield toYmd(d);
}

const start = new Date('2024-06-01T00:00:00Z');
const end = addDays(start, 6);
const commitsPerDay: Record<YMD, number> = {};
for (const day of daysBetween(start, end)) {
  commitsPerDay[day] = (await codemode.git_log({ since: `${day}T00:00:00Z`, until: `${day}T23:59:59Z` })).length;
}
return commitsPerDay;
