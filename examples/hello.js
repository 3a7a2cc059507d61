// corral's quick-start script: runs in a fresh, bounded V8 context.
// Try: corral run examples/hello.js   (add --json for the whole Execution)
const primes = [];
for (let n = 2; primes.length < 10; n++) {
  if (primes.every((p) => n % p !== 0)) primes.push(n);
}
console.log('the first ten primes:', primes);
console.warn('Date.now() is', Date.now(), 'in the hermetic profile');
({ primes, sum: primes.reduce((a, b) => a + b, 0) });
