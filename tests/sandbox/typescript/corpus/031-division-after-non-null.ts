const stats = await codemode.metrics_query({ metric: 'latency_ms', window: '1h' });
const total = stats.sum!;
const count: number = stats.count!;
const mean = total! / count / 1;
const p95 = (stats.percentiles as Record<string, number>)['95']! / 1000;
const ratio = stats.errors! / (count || 1) / 100;
return { mean, p95, ratio };
