function stats(values: number[]): {
  min: number;
  max: number;
  mean: number;
  median: number;
} {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return {
    min: s[0] ?? NaN,
    max: s[s.length - 1] ?? NaN,
    mean: s.reduce((a, b) => a + b, 0) / (s.length || 1),
    median: s.length % 2 ? s[mid]! : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2,
  };
}

const durations: number[] = await codemode.ci_job_durations({ job: 'test', last: 100 });
return stats(durations);
