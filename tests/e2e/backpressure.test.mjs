// Backpressure and protocol edges of `corral serve` (issue 14, items 5 and
// 6) with the npm `ws` client and raw sockets: close 1009 for a message over
// the limit while it is still being sent, 1003 for a binary message, a
// client that pipelines 40 results of 10 MiB and never reads (the daemon's
// peak memory, printed as a `#` line), runs past the per-connection cap
// answered `busy`, and a vanished caller's run cancelled so the only worker
// serves the next caller. Every case ends with a trivial execute.
//
//   cd tests/e2e && CORRAL_BINARY=.../corral node --test backpressure.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const corral = process.env.CORRAL_BINARY ?? path.join(root, 'build/test/apps/corral/corral');

async function startDaemon(args = []) {
  const child = spawn(corral, ['serve', '--port', '0', '--no-admin', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  child.stderr.on('data', (chunk) => { tail = (tail + chunk.toString()).slice(-8192); });
  const exited = once(child, 'exit');
  let port;
  for await (const line of readline.createInterface({ input: child.stdout })) {
    const executor = /executor on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(line);
    if (executor) port = Number(executor[1]);
    if (line.includes('try `corral exec')) break;
  }
  if (!port) throw new Error(`corral serve did not start: ${tail}`);
  child.stdout.resume();
  return {
    pid: child.pid,
    port,
    url: `ws://127.0.0.1:${port}/`,
    log: () => tail,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code, signal] = await exited;
      return code ?? signal;
    },
  };
}

function peakKiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]);
}

// A JSON-RPC client over the npm ws client; `closed` resolves with
// { code, reason }.
async function connect(url, { onToolCall } = {}) {
  const ws = new WebSocket(url, { maxPayload: 64 * 1024 * 1024 });
  await once(ws, 'open');
  const pending = new Map();
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString());
    if (message.method === 'tool.call') {
      onToolCall?.(message, ws);
      return;
    }
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  ws.on('error', () => {});
  const closed = new Promise((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  let nextId = 0;
  return {
    ws,
    closed,
    send(method, params) {
      const id = ++nextId;
      const answer = new Promise((resolve) => pending.set(id, resolve));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      return answer;
    },
    close() { ws.close(); return closed; },
  };
}

async function assertHealthy(daemon, what) {
  const client = await connect(daemon.url);
  const reply = await client.send('execute', { code: '6 * 7' });
  assert.equal(reply.result.ok, true, `${what}: ${JSON.stringify(reply)}`);
  assert.equal(reply.result.execution.value, 42);
  await client.close();
}

// One masked client frame (mask key 0, so the payload goes as is).
function frame(opcode, payload) {
  const length = payload.length;
  let head;
  if (length < 126) {
    head = Buffer.from([0x80 | opcode, 0x80 | length]);
  } else if (length < 65536) {
    head = Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff]);
  } else {
    head = Buffer.alloc(10);
    head[0] = 0x80 | opcode;
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(length), 2);
  }
  return Buffer.concat([head, Buffer.alloc(4), payload]);
}

test('a message over the limit, still being sent, closes with 1009', async () => {
  const daemon = await startDaemon(['--max-workers', '1']);
  try {
    const client = await connect(daemon.url);
    client.ws.send('x'.repeat(17 * 1024 * 1024));
    const closed = await client.closed;
    console.log(`# 17 MiB message: close ${closed.code} "${closed.reason}"`);
    assert.equal(closed.code, 1009);
    await assertHealthy(daemon, 'after 1009');
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});

test('a binary message closes with 1003 and is not processed', async () => {
  const daemon = await startDaemon(['--max-workers', '1']);
  try {
    const client = await connect(daemon.url);
    const answered = client.send('protocolVersion'); // text: answered
    assert.equal((await answered).result, 'corral-executor/1');
    let reply = null;
    client.ws.on('message', (data) => { reply = data.toString(); });
    client.ws.send(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'protocolVersion' })),
      { binary: true });
    const closed = await client.closed;
    console.log(`# binary message: close ${closed.code} "${closed.reason}"`);
    assert.equal(closed.code, 1003);
    assert.match(closed.reason, /binary/);
    assert.equal(reply, null, 'the binary message was answered');
    await assertHealthy(daemon, 'after 1003');
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});

// A run's slot is released only once its answer is written, so the runs a
// connection may hold bound the answers a non-reader can pile up. Measured
// here: about 100 MiB of results in transit plus 12.5 MiB per held run
// (195-215 MiB with 8 held, 295-335 MiB with the default 16, which made a
// fixed 300 MiB bar flaky); 40 answers held would be 400 MiB of text alone.
const heldRuns = 8;
test('40 runs of 10 MiB results to a client that never reads: the daemon stays bounded', async () => {
  const daemon = await startDaemon(['--max-workers', '2', '--max-runs-per-connection', String(heldRuns)]);
  try {
    const start = peakKiB(daemon.pid);
    const socket = net.connect({ port: daemon.port, host: '127.0.0.1' });
    await once(socket, 'connect');
    const key = 'dGhlIHNhbXBsZSBub25jZQ==';
    socket.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\nConnection: Upgrade\r\n` +
      `Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${key}\r\n\r\n`);
    const [head] = await once(socket, 'data');
    assert.match(head.toString(), /^HTTP\/1.1 101/);
    socket.pause(); // from here on nothing is read
    for (let id = 1; id <= 40; id++) {
      socket.write(frame(1, Buffer.from(JSON.stringify({
        jsonrpc: '2.0', id, method: 'execute', params: { code: "'x'.repeat(10 * 1024 * 1024)" },
      }))));
    }
    // Wait until the daemon's peak stops growing: 3 s without a new one.
    let last = -1;
    let steadySince = Date.now();
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && Date.now() - steadySince < 3000) {
      const now = peakKiB(daemon.pid);
      if (now !== last) { last = now; steadySince = Date.now(); }
      await new Promise((r) => setTimeout(r, 50)); // sampling /proc, not synchronisation
    }
    const peak = peakKiB(daemon.pid);
    console.log(`# non-reading client, 40 x 10 MiB: VmHWM ${(start / 1024).toFixed(1)} -> ${(peak / 1024).toFixed(1)} MiB`);
    socket.destroy();
    const allowed = start + (140 + heldRuns * 15) * 1024;
    assert.ok(peak < allowed,
      `the daemon peaked at ${(peak / 1024).toFixed(1)} MiB (allowed ${(allowed / 1024).toFixed(1)})`);
    await assertHealthy(daemon, 'after the non-reading client');
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});

test('a run past --max-runs-per-connection is answered busy at once, retryable', async () => {
  const daemon = await startDaemon(['--max-workers', '1', '--max-runs-per-connection', '1']);
  try {
    const client = await connect(daemon.url);
    const first = client.send('execute', { code: 'for (;;) {}', timeout: 2000 });
    const second = await client.send('execute', { code: '1' });
    assert.equal(second.result.ok, false);
    assert.equal(second.result.failure.code, 'busy');
    assert.equal(second.result.failure.retryable, true);
    assert.equal((await first).result.failure.code, 'timeout');
    const third = await client.send('execute', { code: '3' });
    assert.equal(third.result.execution.value, 3);
    await client.close();
    await assertHealthy(daemon, 'after busy');
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});

test('a vanished caller\'s run is cancelled: the only worker serves the next caller', async () => {
  const daemon = await startDaemon(['--max-workers', '1']);
  try {
    // The guest swallows the tool's failure and spins for its 120 s.
    const gone = await connect(daemon.url, {
      onToolCall: (_message, ws) => ws.terminate(), // the call proves the run is on the worker
    });
    gone.send('execute', {
      code: 'async () => { try { await codemode.wait({}); } catch {} for (;;) {} }',
      tools: [{ name: 'wait' }],
      timeout: 120_000,
    });
    await gone.closed;
    const started = Date.now();
    const next = await connect(daemon.url);
    const reply = await next.send('execute', { code: "'free'", timeout: 20_000 });
    const waited = Date.now() - started;
    console.log(`# the next caller's run answered ${waited} ms after the first caller vanished`);
    assert.equal(reply.result.ok, true, JSON.stringify(reply));
    assert.ok(waited < 10_000, `waited ${waited} ms`);
    await next.close();
    await assertHealthy(daemon, 'after the vanished caller');
  } finally {
    assert.equal(await daemon.stop(), 0);
  }
});
