const m = await codemode.metrics_query({ metric: 'bytes_out', window: '5m' });
const kib = (m.value as number) / 2 ** 10;
const mib = (m.value as number) / 2 ** 20;
const sq = (-(m.delta as number)) ** 2;
const bits = ~(m.flags as number) & 0xff;
return { kib, mib, sq, bits };
