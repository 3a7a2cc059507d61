// The daemon as a real Prometheus sees it under load, with the rules
// corral ships (deploy/kubernetes/monitoring/prometheusrule.yaml): the
// recording rules an autoscaler and the alerts read must come out of the
// daemon's own series, not only out of promtool's synthetic ones
// (tests/deploy runs `promtool test rules` for those).
//
//   cd tests/e2e && CORRAL_BINARY=.../corral node --test monitoring.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';

import { freePort, root, startDaemon, trivialExecute } from './health.mjs';

// The PrometheusRule's `spec` as a plain rules file: its last key, dedented.
function shippedRules() {
  const text = readFileSync(
    path.join(root, 'deploy/kubernetes/monitoring/prometheusrule.yaml'), 'utf8');
  const lines = text.split('\n');
  const spec = lines.indexOf('spec:');
  assert.ok(spec > 0, 'prometheusrule.yaml has a top-level spec:');
  return lines.slice(spec + 1).map((l) => l.replace(/^ {2}/, '')).join('\n');
}

// Executes on one connection whose tool calls wait until `release()`.
async function heldRuns(url, count) {
  const ws = new WebSocket(url);
  await once(ws, 'open');
  const waiting = [];
  let released = false;
  const answer = (id) => ws.send(JSON.stringify({ jsonrpc: '2.0', id, result: 1 }));
  const results = new Map();
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.method === 'tool.call') {
      if (released) answer(message.id);
      else waiting.push(message.id);
      return;
    }
    results.get(message.id)?.(message);
  });
  const done = [];
  for (let id = 1; id <= count; id++) {
    done.push(new Promise((resolve) => results.set(id, resolve)));
    ws.send(JSON.stringify({
      jsonrpc: '2.0', id, method: 'execute',
      params: { code: 'async () => await codemode.gate({})', tools: [{ name: 'gate' }] },
    }));
  }
  return {
    release() {
      released = true;
      for (const id of waiting.splice(0)) answer(id);
      return Promise.all(done).finally(() => ws.close());
    },
  };
}

test('a real Prometheus scrapes the daemon under load and the shipped rules see it', async () => {
  // One slot and room for four to wait: one run holds the slot, three queue.
  const daemon = await startDaemon(['--max-workers', '1', '--max-queue', '4']);
  const dir = mkdtempSync(path.join(tmpdir(), 'corral-monitoring-'));
  let prometheus;
  let prometheusExited;
  let prometheusLog = '';
  try {
    writeFileSync(path.join(dir, 'rules.yml'), shippedRules());
    const check = spawnSync('promtool', ['check', 'rules', path.join(dir, 'rules.yml')],
      { encoding: 'utf8' });
    assert.equal(check.status, 0, `promtool check rules: ${check.stdout}${check.stderr}`);
    writeFileSync(path.join(dir, 'prometheus.yml'), [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'rule_files: [rules.yml]',
      'scrape_configs:',
      '  - job_name: corral',
      '    static_configs:',
      `      - targets: ['127.0.0.1:${daemon.port}']`,
      '',
    ].join('\n'));
    const port = await freePort();
    prometheus = spawn('prometheus', [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    prometheus.stderr.on('data', (chunk) => { prometheusLog = (prometheusLog + chunk).slice(-8192); });
    prometheusExited = once(prometheus, 'exit');
    prometheus.on('error', (error) => {
      prometheusLog += `\n${error}`;
      prometheus = undefined; // never started: nothing to stop
    });
    const query = async (expr) => {
      const url = `http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(expr)}`;
      const body = await (await fetch(url, { signal: AbortSignal.timeout(5000) })).json();
      return body.data?.result ?? [];
    };
    // Prometheus evaluates on its own clock: wait (bounded) for `expr` to
    // have the value `want`.
    const eventually = async (expr, want) => {
      const deadline = Date.now() + 60_000;
      let seen;
      while (Date.now() < deadline) {
        try {
          seen = (await query(expr))[0]?.value[1];
          if (seen === want) return;
        } catch {
          // Prometheus is not listening yet.
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.fail(`${expr} stayed ${seen}, never ${want}\n${prometheusLog}`);
    };

    await eventually('up{job="corral"}', '1');
    const load = await heldRuns(`ws://127.0.0.1:${daemon.port}/`, 4);
    // (1 running + 3 queued) / 1 slot; 3 queued / room for 4.
    await eventually('pod:corral_busy:ratio', '4');
    await eventually('namespace:corral_queue_saturation:ratio', '0.75');
    await eventually('corral_execution_slots{job="corral"}', '1');
    const results = await load.release();
    for (const r of results) assert.equal(r.result?.ok, true, JSON.stringify(r));
    await eventually('pod:corral_busy:ratio', '0');
    await eventually('corral_queue_wait_seconds_count{job="corral"}', '4');
    // Three of the four waited behind the first, which held the slot
    // until release.
    assert.ok(Number((await query('corral_queue_wait_seconds_sum{job="corral"}'))[0].value[1]) > 0);
    assert.equal((await query('corral_build_info{job="corral"}'))[0]?.value[1], '1');
    assert.ok(Number((await query('process_open_fds{job="corral"}'))[0]?.value[1]) > 0);
    assert.ok(Number((await query('process_resident_memory_bytes{job="corral"}'))[0]?.value[1]) > 0);
    // Nothing is even pending on a healthy daemon (each alert's `for` is
    // minutes: pending is what would show within this test), but for one
    // cause outside it: on a loaded machine a scrape can miss its 1 s
    // timeout, and `up` is 0 until the next.
    assert.deepEqual((await query('ALERTS{alertname!="CorralNoReplicaUp"}'))
      .map((s) => s.metric.alertname), []);
  } finally {
    if (prometheus && prometheus.exitCode === null && prometheus.signalCode === null) {
      prometheus.kill('SIGTERM');
      await prometheusExited;
    }
    rmSync(dir, { recursive: true, force: true });
    assert.equal(await daemon.stop(), 0);
  }
});

// The execution log line is built from what a caller sends: a megabyte id
// is shown by its first 256 bytes and its size, an id that JSON would
// rewrite (1.50) as its text, and the daemon answers and stays small.
test('the execution log line bounds a hostile id and keeps an odd one as sent', async () => {
  const daemon = await startDaemon(['--log-format', 'json']);
  try {
    const ws = new WebSocket(daemon.url, { maxPayload: 64 * 1024 * 1024 });
    await once(ws, 'open');
    const answers = [];
    ws.on('message', (data) => answers.push(data.toString()));
    const huge = `"${'\u00e9'.repeat(512 * 1024)}"`; // 1 MiB of two-byte characters
    const answered = (n) => new Promise((resolve) => {
      const check = () => (answers.length >= n ? resolve() : setTimeout(check, 20));
      check();
    });
    ws.send(`{"jsonrpc":"2.0","id":${huge},"method":"execute","params":{"code":"1"}}`);
    ws.send('{"jsonrpc":"2.0","id":1.50,"method":"execute","params":{"code":"2"}}');
    await answered(2);
    ws.close();
    await once(ws, 'close');
    const lines = daemon.log.tail.split('\n').filter((l) => l.includes('"message":"execution"'))
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 2, daemon.log.tail);
    const long = lines.find((l) => l.id_bytes !== undefined);
    assert.equal(long.id_bytes, Buffer.byteLength(huge));
    assert.ok(Buffer.byteLength(long.id) <= 256, long.id.length);
    assert.ok(long.id.startsWith('"\u00e9\u00e9'), 'cut at a character boundary, as sent');
    assert.ok(!long.id.includes('\ufffd'));
    const odd = lines.find((l) => l.id_bytes === undefined);
    assert.equal(odd.id, '1.50');
    assert.ok(daemon.log.bytes < 64 * 1024, `the log grew ${daemon.log.bytes} bytes`);
    // Requests refused before the pool cost the caller a small frame each:
    // 2,000 of them add no line at info.
    const before = daemon.log.bytes;
    const flood = new WebSocket(daemon.url);
    await once(flood, 'open');
    let refused = 0;
    const all = new Promise((resolve) => flood.on('message', () => { if (++refused === 2000) resolve(); }));
    for (let i = 0; i < 2000; i++) {
      flood.send(`{"jsonrpc":"2.0","id":${i},"method":"execute","params":{"code":${i}}}`);
    }
    await all;
    flood.close();
    await once(flood, 'close');
    assert.ok(daemon.log.bytes - before < 1024, `2,000 refusals logged ${daemon.log.bytes - before} bytes`);
    assert.equal((await trivialExecute(daemon)).ok, true);
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});
