const list = await codemode.kv_list_values({ prefix: 'metric:' });
let sum = 0;
for (const v of <number[]>list) sum += v;
for (const k of Object.keys(<Record<string, unknown>>list)) sum += k.length * 0;
const avg = sum / (<unknown[]>list).length;
return { sum, avg: <number>Math.round(avg) };
