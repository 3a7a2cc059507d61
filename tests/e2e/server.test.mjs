// End-to-end tests of the executor server with clients nobody here wrote:
// the npm `ws` client, Node's fetch, promtool and a real Prometheus server.
//
//   CORRAL_BINARY=build/test/apps/corral/corral \
//   CORRAL_TEST_SERVER=build/test/tests/server/corral_test_server \
//   node --test tests/e2e/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

import { freePort } from './health.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const corral = process.env.CORRAL_BINARY ?? path.join(root, 'build/test/apps/corral/corral');
const testServer =
  process.env.CORRAL_TEST_SERVER ?? path.join(root, 'build/test/tests/server/corral_test_server');

// Starts the embedded server; resolves once it printed its address.
async function startServer(args = []) {
  const child = spawn(testServer, ['--worker', corral, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout });
  const queue = [];
  const waiters = [];
  lines.on('line', (line) => {
    const waiter = waiters.shift();
    if (waiter) waiter(JSON.parse(line));
    else queue.push(JSON.parse(line));
  });
  const nextLine = () =>
    queue.length ? Promise.resolve(queue.shift()) : new Promise((r) => waiters.push(r));
  const { port } = await nextLine();
  return {
    port,
    url: `ws://127.0.0.1:${port}`,
    http: `http://127.0.0.1:${port}`,
    async command(line) {
      child.stdin.write(line + '\n');
      assert.deepEqual(await nextLine(), { ack: line });
    },
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.stdin.end();
      const [code] = await once(child, 'exit');
      return code;
    },
  };
}

// A JSON-RPC connection over the npm ws client: call() resolves with the
// whole response message; tool.call requests go to `onToolCall`.
async function connect(url, { headers = {}, onToolCall } = {}) {
  const ws = new WebSocket(url, { headers });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
  let nextId = 0;
  const pending = new Map();
  ws.on('message', async (data) => {
    const message = JSON.parse(data.toString());
    if (message.method === 'tool.call') {
      const answer = onToolCall
        ? await onToolCall(message.params)
        : { error: { code: -32000, message: 'no tools here' } };
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, ...answer }));
      return;
    }
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const closed = new Promise((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return {
    ws,
    closed,
    call(method, params) {
      const id = ++nextId;
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      return new Promise((resolve) => pending.set(id, resolve));
    },
    async execute(params) {
      return (await this.call('execute', params)).result;
    },
  };
}

// Status of a raw upgrade the server refuses.
async function refusedStatus(url, headers = {}) {
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode);
      ws.terminate();
    });
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('error', () => {});
  });
}

test('the ws client speaks the protocol: version, execute, the tool-call bridge', async () => {
  const server = await startServer();
  try {
    const client = await connect(server.url, {
      onToolCall: async ({ name, input }) => ({ result: { name, doubled: input.n * 2 } }),
    });
    assert.equal((await client.call('protocolVersion')).result, 'corral-executor/1');
    const plain = await client.execute({ code: 'async () => { console.log("hi"); return 6 * 7; }' });
    assert.equal(plain.ok, true);
    assert.equal(plain.execution.value, 42);
    assert.equal(plain.execution.stdout, 'hi\n');
    const bridged = await client.execute({
      code: 'async () => (await codemode.math.double({n: 21}))',
      tools: [{ name: 'math.double', description: 'doubles n', inputSchema: { type: 'object' } }],
    });
    assert.deepEqual(bridged.execution.value, { name: 'math.double', doubled: 42 });
    assert.equal(bridged.execution.usage.tool_calls, 1);
    const ruby = await client.execute({
      language: 'ruby',
      code: 'Codemode::Math.double(n: 20)["doubled"] + 2',
      tools: [{ name: 'math.double' }],
    });
    assert.equal(ruby.ok, true, JSON.stringify(ruby));
    assert.equal(ruby.execution.value, 42);
    const failed = await client.execute({ code: 'throw new TypeError("nope")' });
    assert.equal(failed.ok, false);
    assert.equal(failed.failure.code, 'guest_error');
    const invalid = await client.execute({ code: 42 });
    assert.equal(invalid.failure.code, 'invalid_request');
    const unknown = await client.call('shutdown');
    assert.equal(unknown.error.code, -32601);
    // Several in flight at once on one socket.
    const many = await Promise.all(
      [1, 2, 3, 4].map((n) => client.execute({ code: `${n} * 10` })),
    );
    assert.deepEqual(
      many.map((r) => r.execution.value),
      [10, 20, 30, 40],
    );
    client.ws.close();
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('the seed example: four asks, four resolved bounds', async () => {
  const server = await startServer([
    '--workers', '1', '--default-timeout-ms', '200', '--max-timeout-ms', '500',
  ]);
  try {
    const client = await connect(server.url);
    const spin = 'async () => { for (;;) {} }';
    const seen = [];
    for (const timeout of [undefined, 400, 5000, null]) {
      const params = { code: spin };
      if (timeout !== undefined) params.timeout = timeout;
      const { failure } = await client.execute(params);
      seen.push(`asked for ${String(timeout)}: ${failure.message.split('.')[0]}`);
    }
    assert.deepEqual(seen, [
      'asked for undefined: Execution timed out at its 200 ms bound',
      'asked for 400: Execution timed out at its 400 ms bound',
      'asked for 5000: Execution timed out at its 500 ms bound',
      'asked for null: Execution timed out at its 500 ms bound',
    ]);
    client.ws.close();
  } finally {
    await server.stop();
  }
});

test('refusals: 403 from the hook, 503 when not accepting', async () => {
  const server = await startServer(['--token', 's3cret']);
  try {
    assert.equal(await refusedStatus(server.url), 403);
    const admitted = await connect(server.url, { headers: { Authorization: 'Bearer s3cret' } });
    await server.command('stop-accepting');
    assert.equal(
      await refusedStatus(server.url, { Authorization: 'Bearer s3cret' }),
      503,
    );
    // The open session is untouched.
    assert.equal((await admitted.execute({ code: '1 + 1' })).execution.value, 2);
    assert.equal((await fetch(`${server.http}/readyz`)).status, 503);
    await server.command('resume-accepting');
    assert.equal((await fetch(`${server.http}/readyz`)).status, 200);
    admitted.ws.close();
  } finally {
    await server.stop();
  }
});

// A page on another site, or on a rebinding name, must not drive a local
// server; the ws client (no Origin unless told) and allowed pages may.
test('origins and hosts: foreign ones refused, the server stays healthy', async () => {
  const server = await startServer(['--allowed-origins', 'https://app.example']);
  const healthy = async () => {
    const started = performance.now();
    assert.equal((await fetch(`${server.http}/healthz`)).status, 200);
    assert.ok(performance.now() - started < 100, '/healthz answered within 100 ms');
    const c = await connect(server.url);
    assert.equal((await c.execute({ code: '6 * 7' })).execution.value, 42);
    c.ws.close();
  };
  try {
    for (const headers of [
      { Origin: 'https://evil.example' },
      { Origin: 'null' },
      { Origin: 'https://app.example:8443' },
      { Origin: 'https://app.example/page' },
      { Host: '127.0.0.1.attacker.example' },
      { Host: `attacker.example:${server.port}` },
    ]) {
      assert.equal(await refusedStatus(server.url, headers), 403, JSON.stringify(headers));
      await healthy();
    }
    assert.equal(await refusedStatus(server.url, { Host: '127.1' }), 400);
    await healthy();
    const refused = await fetch(`${server.http}/healthz`, {
      method: 'POST',
      headers: { Origin: 'https://evil.example' },
    });
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /the Origin https:\/\/evil\.example is not allowed/);
    for (const headers of [{}, { Origin: 'https://app.example' }, { Origin: 'http://localhost:3000' }]) {
      const admitted = await connect(server.url, { headers });
      assert.equal((await admitted.execute({ code: '1 + 1' })).execution.value, 2);
      admitted.ws.close();
    }
  } finally {
    await server.stop();
  }
});

test('probes over fetch: verbs, query strings, no metrics without a source', async () => {
  const server = await startServer();
  try {
    const health = await fetch(`${server.http}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok');
    const ready = await fetch(`${server.http}/readyz?probe=k8s`);
    assert.equal(await ready.text(), 'ready');
    assert.equal((await fetch(`${server.http}/healthz`, { method: 'HEAD' })).status, 200);
    assert.equal((await fetch(`${server.http}/healthz`, { method: 'POST' })).status, 404);
    assert.equal((await fetch(`${server.http}/metrics`)).status, 404);
  } finally {
    await server.stop();
  }
});

test('a client that vanishes mid-tool-call does not end the server, and its run ends now', async () => {
  const server = await startServer(['--metrics']);
  try {
    let sawCall;
    const called = new Promise((resolve) => (sawCall = resolve));
    const doomed = await connect(server.url, {
      onToolCall: () => {
        sawCall();
        return new Promise(() => {});
      },
    });
    doomed.call('execute', {
      code: 'async () => { try { await codemode.wait({}); } catch (e) { return e.message; } }',
      tools: [{ name: 'wait' }],
      timeout: 300_000,
    });
    await called;
    doomed.ws.terminate();
    // Nobody can receive the answer, so the run is cancelled (docs/protocol.md);
    // the guest may catch its tool call's rejection and return first, which
    // counts as ok. Either way it ends now, not at its 300 s timeout.
    const counted = (scrape, outcome) =>
      Number(scrape.match(new RegExp(`corral_executions_total\\{outcome="${outcome}"\\} (\\d+)`))?.[1] ?? 0);
    const deadline = Date.now() + 10_000;
    let scrape = '';
    while (Date.now() < deadline) {
      scrape = await (await fetch(`${server.http}/metrics`)).text();
      if (counted(scrape, 'ok') + counted(scrape, 'cancelled') === 1) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(counted(scrape, 'ok') + counted(scrape, 'cancelled'), 1, scrape);
    assert.match(scrape, /corral_connections_active 0\n/);
    const next = await connect(server.url);
    const reply = await next.call('execute', { code: 'async () => 6 * 7' });
    assert.equal(reply.result.execution.value, 42);
    next.ws.close();
  } finally {
    await server.stop();
  }
});

test('drain: the result of a run that finishes inside it arrives, then 1001', async () => {
  const server = await startServer(['--drain-ms', '10000']);
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  let sawCall;
  const called = new Promise((resolve) => (sawCall = resolve));
  const client = await connect(server.url, {
    onToolCall: async () => {
      sawCall();
      await gate;
      return { result: 'released' };
    },
  });
  const result = client.execute({
    code: 'async () => await codemode.gate({})',
    tools: [{ name: 'gate' }],
  });
  await called;
  const stopped = server.stop();
  release();
  assert.equal((await result).execution.value, 'released');
  assert.deepEqual(await client.closed, { code: 1001, reason: 'server shutting down' });
  assert.equal(await stopped, 0);
});

test('promtool accepts a scrape, and a real Prometheus scrapes the target up', async (t) => {
  const server = await startServer(['--metrics']);
  const dir = mkdtempSync(path.join(tmpdir(), 'corral-prometheus-'));
  let prometheus;
  try {
    const client = await connect(server.url, {
      onToolCall: () => ({ result: 1 }),
    });
    await client.execute({ code: 'async () => codemode.one({})', tools: [{ name: 'one' }] });
    await client.execute({ code: 'throw 1' });
    client.ws.close();

    const scrape = await fetch(`${server.http}/metrics`);
    assert.equal(scrape.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const text = await scrape.text();
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    assert.equal(check.status, 0, `promtool: ${check.stdout}${check.stderr}`);

    const port = await freePort();
    writeFileSync(
      path.join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: corral',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${server.port}']`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let log = '';
    prometheus.stderr.on('data', (chunk) => (log += chunk));
    const deadline = Date.now() + 60_000;
    let health;
    while (Date.now() < deadline) {
      try {
        const targets = await (await fetch(`http://127.0.0.1:${port}/api/v1/targets`)).json();
        health = targets.data.activeTargets[0]?.health;
        if (health === 'up') break;
      } catch {
        // Prometheus is not listening yet.
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(health, 'up', log);
    const query = await (
      await fetch(
        `http://127.0.0.1:${port}/api/v1/query?query=corral_executions_total{outcome="guest_error"}`,
      )
    ).json();
    assert.equal(query.data.result[0]?.value[1], '1', JSON.stringify(query));
  } finally {
    if (prometheus) {
      prometheus.kill('SIGTERM');
      await once(prometheus, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
    await server.stop();
  }
});
