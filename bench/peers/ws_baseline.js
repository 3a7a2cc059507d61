#!/usr/bin/env node
// Peer baseline for corral's executor server: the same executor protocol
// subset (JSON-RPC 2.0 over WebSocket: protocolVersion, execute with tools,
// tool.call back to the caller) served by the npm `ws` server with
// isolated-vm, a fresh context per run, on a pool of isolates (one per
// "worker"). bench/server_bench drives it and corral with the same load.
//
//   node ws_baseline.js [--workers=2] [--port=0]
// Prints {"port":N} once listening; exits when stdin closes.
'use strict';

const ivm = require('isolated-vm');
const { WebSocketServer } = require('ws');

const opts = { workers: 2, port: 0 };
for (const arg of process.argv.slice(2)) {
  const m = /^--([a-z]+)=(\d+)$/.exec(arg);
  if (!m || !(m[1] in opts)) throw new Error(`unknown argument: ${arg}`);
  opts[m[1]] = Number(m[2]);
}

// A pool of isolates: each run leases one, as corral leases a worker.
const idle = Array.from({ length: opts.workers }, () => new ivm.Isolate({ memoryLimit: 64 }));
const waiting = [];
function lease() {
  return idle.length ? Promise.resolve(idle.pop()) : new Promise((r) => waiting.push(r));
}
function release(isolate) {
  const next = waiting.shift();
  if (next) next(isolate);
  else idle.push(isolate);
}

// Console capture and the code-mode shapes (a function is called, anything
// else is the value), as corral's sandbox offers them.
function wrap(code, tools) {
  const entries = tools
    .map((t) => `${JSON.stringify(t)}: (a) => $0.apply(undefined, [${JSON.stringify(t)}, JSON.stringify(a === undefined ? null : a)], { result: { promise: true } }).then(JSON.parse)`)
    .join(', ');
  return `(async () => {
    const __out = [];
    globalThis.console = { log: (...a) => { __out.push(a.join(' ') + '\\n'); } };
    globalThis.codemode = { ${entries} };
    const __v = (${code});
    const value = typeof __v === 'function' ? await __v() : await __v;
    return JSON.stringify({ value: value === undefined ? null : value, stdout: __out.join('') });
  })()`;
}

async function execute(ws, id, params) {
  const tools = (params.tools || []).map((t) => t.name);
  const isolate = await lease();
  const started = process.hrtime.bigint();
  const context = await isolate.createContext();
  try {
    const dispatch = new ivm.Reference(async (name, argsJson) => {
      const callId = `c${++ws.nextCall}`;
      const answer = new Promise((resolve, reject) => ws.calls.set(callId, { resolve, reject }));
      ws.send(JSON.stringify({
        jsonrpc: '2.0', id: callId, method: 'tool.call',
        params: { execution: id, name, input: JSON.parse(argsJson) },
      }));
      return JSON.stringify(await answer);
    });
    const script = wrap(params.code, tools);
    const text = await context.evalClosure(`return eval(${JSON.stringify(script)})`, [dispatch], {
      result: { promise: true, copy: true },
      timeout: typeof params.timeout === 'number' ? params.timeout : 30000,
    });
    const out = JSON.parse(text);
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    return {
      ok: true,
      execution: {
        value: out.value, stdout: out.stdout, stderr: '', stdout_truncated: false,
        stderr_truncated: false, failed: false,
        usage: { wall_time: wall, cpu_time: 0, memory_peak: 0, tool_calls: 0, output_bytes: 0 },
      },
    };
  } catch (e) {
    return { ok: false, failure: { code: 'guest_error', message: String(e && e.message), retryable: false } };
  } finally {
    context.release();
    release(isolate);
  }
}

const server = new WebSocketServer({ host: '127.0.0.1', port: opts.port }, () => {
  process.stdout.write(JSON.stringify({ port: server.address().port }) + '\n');
});
server.on('connection', (ws) => {
  ws.nextCall = 0;
  ws.calls = new Map();
  ws.on('message', async (data) => {
    const message = JSON.parse(data.toString());
    if (message.method === 'protocolVersion') {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: 'corral-executor/1' }));
    } else if (message.method === 'execute') {
      const result = await execute(ws, message.id, message.params);
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    } else if (!message.method && ws.calls.has(message.id)) {
      const call = ws.calls.get(message.id);
      ws.calls.delete(message.id);
      if (message.error) call.reject(new Error(message.error.message));
      else call.resolve(message.result);
    }
  });
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
