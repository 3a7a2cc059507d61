function* fib() {
  let [a, b] = [0, 1];
  for (;;) {
    yield a;
    [a, b] = [b, a + b];
  }
}
const first = [];
for (const n of fib()) {
  if (n > 1000) break;
  first.push(n);
}
const saved = await codemode.kv_set({ key: 'fib', value: JSON.stringify(first) });
return { count: first.length, saved: !!saved, ...{ last: first.at(-1) } };
