#!/usr/bin/env node
// Peer benchmark: isolated-vm fresh-context eval rate, for comparison with
// corral's sandbox_bench (BM_FreshContextEval, BM_Workload/*).
//
// One isolate (memoryLimit 64 MB) is reused; every timed iteration is
//   ctx = await isolate.createContext(); await ctx.eval...(code); ctx.release()
// Results: JSON on stdout, a human-readable table on stderr.
//
//   node isolated_vm_bench.js [--iterations=2000] [--warmup=200]
//                             [--only=name,name] [--timeout=MS]
//                             [--workloads=/path/to/workloads.json]
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const ivm = require('isolated-vm');

function parseArgs(argv) {
  const opts = {
    iterations: 2000,
    warmup: 200,
    only: null,
    timeout: 0,
    workloads: path.resolve(__dirname, '../../../shared/bench/workloads.json'),
  };
  for (const arg of argv) {
    const m = /^--([a-z]+)=(.*)$/.exec(arg);
    if (!m || !(m[1] in opts)) throw new Error(`unknown argument: ${arg}`);
    const [, key, value] = m;
    if (key === 'only') opts.only = new Set(value.split(',').filter(Boolean));
    else if (key === 'workloads') opts.workloads = path.resolve(value);
    else opts[key] = Number(value);
  }
  if (process.env.CORRAL_WORKLOADS_JSON) opts.workloads = process.env.CORRAL_WORKLOADS_JSON;
  return opts;
}

// Per-context prelude for the standard workloads: console.* is captured inside
// the context (one array per execution, returned with the result, so the
// capture costs no extra boundary crossings); codemode.<tool> calls the host
// through an async ivm.Callback, with arguments and results crossing as JSON.
function prelude(hostTools) {
  const tools = hostTools
    .map((t) => `${JSON.stringify(t)}: (args) => $0(${JSON.stringify(t)}, JSON.stringify(args === undefined ? null : args)).then(JSON.parse)`)
    .join(', ');
  return `
    const __logs = [];
    const __fmt = (a) => typeof a === 'string' ? a : (() => { try { return JSON.stringify(a); } catch { return String(a); } })();
    const __cap = (level) => (...a) => { __logs.push(level + ' ' + a.map(__fmt).join(' ')); };
    globalThis.console = { log: __cap('log'), info: __cap('info'), warn: __cap('warn'), error: __cap('error'), debug: __cap('debug') };
    globalThis.codemode = { ${tools} };
  `;
}

// Host side of the tools. Only "echo" is defined by workloads.json.
const hostToolImpls = {
  echo: (json) => json,
};
const toolCallback = new ivm.Callback(
  (name, json) => {
    const impl = hostToolImpls[name];
    if (!impl) throw new Error(`unknown tool ${name}`);
    return impl(json);
  },
  { async: true },
);

function quantile(sorted, q) {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function summarize(samplesNs, wallNs) {
  const us = Float64Array.from(samplesNs, (n) => n / 1000).sort();
  const sum = us.reduce((a, b) => a + b, 0);
  const mean = sum / us.length;
  const round = (x) => Math.round(x * 100) / 100;
  return {
    iterations: us.length,
    p50_us: round(quantile(us, 0.5)),
    p90_us: round(quantile(us, 0.9)),
    p99_us: round(quantile(us, 0.99)),
    mean_us: round(mean),
    min_us: round(us[0]),
    max_us: round(us[us.length - 1]),
    runs_per_sec: Math.round(1e6 / mean),
    // Throughput measured on the wall clock over the whole timed loop.
    wall_runs_per_sec: Math.round((us.length * 1e9) / wallNs),
  };
}

async function measure(isolate, runOnce, opts) {
  for (let i = 0; i < opts.warmup; i++) await runOnce(isolate);
  const samples = new Array(opts.iterations);
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  for (let i = 0; i < opts.iterations; i++) {
    const t0 = process.hrtime.bigint();
    await runOnce(isolate);
    samples[i] = Number(process.hrtime.bigint() - t0);
  }
  const cpu = process.cpuUsage(cpuStart);
  const wall = Number(process.hrtime.bigint() - start);
  // CPU of the whole process (every thread: isolated-vm evaluates on a pool
  // thread) per run, as corral's benchmarks count it.
  const cpuPerRun = (cpu.user + cpu.system) / opts.iterations;
  return { ...summarize(samples, wall), cpu_us_per_run: Math.round(cpuPerRun * 100) / 100 };
}

// Each run compiles a text no earlier run had, as corral's benchmarks do
// (bench/unique_source.hpp): V8's compile cache would otherwise serve it.
let serial = 0;
function uniqueSource(source) {
  serial += 1;
  return `/* run ${serial} */ ${source}`;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const spec = JSON.parse(fs.readFileSync(opts.workloads, 'utf8'));
  const hostTools = spec.hostTools || [];
  const evalOpts = opts.timeout > 0 ? { timeout: opts.timeout } : {};
  const isolate = new ivm.Isolate({ memoryLimit: 64 });

  const cases = [];

  // 1. eval("1+1") with nothing installed: the raw fresh-context cost, async API
  //    (the one the corral comparison uses).
  cases.push({
    name: 'eval_1plus1',
    description: 'await createContext(); await ctx.eval("1+1"); release() - no globals installed',
    expect: 2,
    run: async (iso) => {
      const ctx = await iso.createContext();
      try {
        return await ctx.eval(uniqueSource('1+1'), evalOpts);
      } finally {
        ctx.release();
      }
    },
  });

  // 2. The same with the synchronous API (no thread-pool hop); isolated-vm's best case.
  cases.push({
    name: 'eval_1plus1_sync',
    description: 'createContextSync(); ctx.evalSync("1+1"); release() - no globals installed',
    expect: 2,
    run: async (iso) => {
      const ctx = iso.createContextSync();
      try {
        return ctx.evalSync(uniqueSource('1+1'), evalOpts);
      } finally {
        ctx.release();
      }
    },
  });

  // 3. The standard workloads: prelude (console capture + codemode tools) and the
  //    async arrow function run in one evalClosure per fresh context; the promise
  //    is awaited and { value, logs } copied out.
  const pre = prelude(hostTools);
  const skipped = [];
  for (const w of spec.workloads) {
    const usesTools = hostTools.some((t) => w.source.includes(`codemode.${t}`));
    const code = `${pre}\nconst __value = await (${w.source})();\nreturn { value: __value === undefined ? null : __value, logs: __logs };`;
    // evalClosure's body is a function body; wrap it so `await` is allowed.
    const body = `return (async () => { ${code} })();`;
    cases.push({
      name: `workload/${w.name}`,
      description: `fresh context + prelude + (${w.name} source)()` + (usesTools ? ' with async ivm.Callback host tool' : ''),
      expect: w.expect,
      expectLogs: w.expectLogs,
      run: async (iso) => {
        const ctx = await iso.createContext();
        try {
          return await ctx.evalClosure(uniqueSource(body), [toolCallback], {
            ...evalOpts,
            arguments: { reference: false },
            result: { promise: true, copy: true },
          });
        } finally {
          ctx.release();
        }
      },
    });
  }

  return (async () => {
    const results = [];
    for (const c of cases) {
      if (opts.only && !opts.only.has(c.name) && !opts.only.has(c.name.replace(/^workload\//, ''))) continue;
      // Correctness check before timing.
      let first;
      try {
        first = await c.run(isolate);
      } catch (err) {
        skipped.push({ name: c.name, reason: String(err && err.message ? err.message : err) });
        continue;
      }
      const value = c.name.startsWith('workload/') ? first.value : first;
      const okValue = JSON.stringify(value) === JSON.stringify(c.expect);
      const okLogs = c.expectLogs === undefined || (first.logs && first.logs.length === c.expectLogs);
      if (!okValue || !okLogs) {
        skipped.push({
          name: c.name,
          reason: `unexpected result ${JSON.stringify(value)} / ${first.logs ? first.logs.length : '-'} logs`,
        });
        continue;
      }
      const stats = await measure(isolate, c.run, opts);
      results.push({ name: c.name, description: c.description, ...stats });
    }

    const heap = isolate.getHeapStatisticsSync();
    const report = {
      peer: 'isolated-vm',
      isolated_vm_version: require('isolated-vm/package.json').version,
      node_version: process.version,
      v8_version: process.versions.v8,
      platform: `${os.type()} ${os.release()} ${os.arch()}`,
      cpus: os.cpus().length,
      cpu_model: (os.cpus()[0] || {}).model,
      memory_limit_mb: 64,
      warmup: opts.warmup,
      iterations: opts.iterations,
      timeout_ms: opts.timeout || null,
      workloads_file: opts.workloads,
      isolate_heap_used_mb_after: Math.round((heap.used_heap_size / 1048576) * 10) / 10,
      results,
      skipped,
    };
    isolate.dispose();
    process.stdout.write(JSON.stringify(report, null, 2) + '\n');

    const pad = (s, n) => String(s).padStart(n);
    const lines = [
      `isolated-vm ${report.isolated_vm_version} on Node ${process.version} (V8 ${process.versions.v8}), ${report.cpus} cpus`,
      `one reused isolate (memoryLimit 64), fresh context per run; ${opts.warmup} warm-up + ${opts.iterations} timed runs`,
      '',
      `${'case'.padEnd(22)}${pad('p50 us', 10)}${pad('p90 us', 10)}${pad('mean us', 10)}${pad('runs/s', 10)}`,
      '-'.repeat(62),
      ...results.map(
        (r) => `${r.name.padEnd(22)}${pad(r.p50_us.toFixed(1), 10)}${pad(r.p90_us.toFixed(1), 10)}${pad(r.mean_us.toFixed(1), 10)}${pad(r.runs_per_sec, 10)}`,
      ),
      ...skipped.map((s) => `${s.name.padEnd(22)}  skipped: ${s.reason}`),
      '',
    ];
    process.stderr.write(lines.join('\n') + '\n');
  })();
}

main().catch((err) => {
  process.stderr.write(`isolated_vm_bench: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
