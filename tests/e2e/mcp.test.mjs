// End-to-end tests of corral's MCP server with the official SDK client
// (@modelcontextprotocol/sdk), over stdio (`corral mcp`) and Streamable HTTP
// (`corral serve`, /mcp), with @modelcontextprotocol/server-everything as an
// upstream server that code mode calls.
//
//   CORRAL_BINARY=build/test/apps/corral/corral node --test tests/e2e/mcp.test.mjs
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync, promises as fs, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const corral = process.env.CORRAL_BINARY ?? path.join(root, 'build/test/apps/corral/corral');
const manifest = path.join(root, 'tests/mcp/fixtures/mcp_tools.yaml');
const everything = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js');
// Confined (the default) with its package folder bound: the minimal
// filesystem view shows node itself (/usr) but not node_modules.
const upstream = JSON.stringify({
  everything: {
    command: [process.execPath, everything, 'stdio'],
    confinement: { binds: [path.join(here, 'node_modules')] },
  },
});
const scratch = mkdtempSync(path.join(tmpdir(), 'corral-mcp-e2e-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const CODE = `async () => {
  const greeting = await codemode.fixture_greet({ flags: { name: 'code mode' } });
  const echo = await codemode.everything.echo({ message: 'through corral' });
  const sum = await codemode.everything.get_sum({ a: 2, b: 3 });
  console.log('three calls');
  return { greeting: greeting.stdout, echo, sum };
}`;

async function stdioClient(args = [], manifests = [manifest]) {
  const transport = new StdioClientTransport({
    command: corral,
    args: ['mcp', '--mcp-manifest', manifests.join(','), '--mcp-upstream', upstream, '--max-workers', '2', ...args],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'corral-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// `corral serve` on a free port; resolves with its base URL once it printed it.
async function serve(args = []) {
  const child = spawn(corral, ['serve', '--port', '0', '--admin', 'false', '--max-workers', '2',
    '--mcp-manifest', manifest, '--mcp-upstream', upstream, ...args],
  { stdio: ['ignore', 'pipe', 'ignore'] });
  const lines = readline.createInterface({ input: child.stdout });
  for await (const line of lines) {
    const match = /executor on ws:\/\/([^/]+)\//.exec(line);
    if (match) {
      return {
        url: `http://${match[1]}/mcp`,
        port: Number(match[1].split(':')[1]),
        async stop() {
          child.kill('SIGTERM');
          const [code] = await once(child, 'exit');
          return code;
        },
      };
    }
  }
  throw new Error('corral serve did not start');
}

async function httpClient(url, headers = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: 'corral-e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

// Waits (bounded) until none of `pids` is alive: the server cleans up after a
// cancelled call without answering it, so there is no message to wait for.
async function gone(pids, limitMs = 15000) {
  const until = Date.now() + limitMs;
  while (pids.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
  return !pids.some(alive);
}

// Calls fixture_spawn (which starts two sleepers), aborts the call once the
// tree exists, and checks the whole tree is gone.
async function cancelLongRun(client, name) {
  const fifo = path.join(scratch, name);
  execFileSync('mkfifo', [fifo]);
  const controller = new AbortController();
  const call = client.callTool({ name: 'fixture_spawn', arguments: { flags: { pids: fifo } } },
    undefined, { signal: controller.signal, timeout: 60000 });
  const pids = (await fs.readFile(fifo, 'utf8')).trim().split('\n').map(Number);
  assert.equal(pids.length, 3);
  assert.ok(pids.every(alive));
  controller.abort('the test cancels');
  await assert.rejects(call);
  assert.ok(await gone(pids), `still running: ${pids.filter(alive)}`);
}

function checkExecute(result) {
  assert.equal(result.isError, undefined);
  assert.deepEqual(result.structuredContent.value, {
    greeting: 'hello, code mode\n',
    echo: 'Echo: through corral',
    sum: 'The sum of 2 and 3 is 5.',
  });
  assert.ok(result.content.some((c) => c.text === 'stdout:\nthree calls\n'));
}

test('stdio: tools, execute through bound commands and an upstream, a direct tool, cancellation', async () => {
  const client = await stdioClient();
  try {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    assert.deepEqual(names, ['execute', 'fixture_big', 'fixture_fail', 'fixture_greet', 'fixture_spawn']);
    const execute = tools[0];
    assert.match(execute.description, /declare const codemode/);
    assert.match(execute.description, /everything: \{/);
    assert.match(execute.description, /get_sum\(input: \{/);
    const greet = tools.find((t) => t.name === 'fixture_greet');
    assert.equal(greet.annotations.readOnlyHint, true);
    assert.equal(greet.annotations.title, 'Greet someone');

    checkExecute(await client.callTool({ name: 'execute', arguments: { code: CODE } }));
    const direct = await client.callTool({ name: 'fixture_greet', arguments: { flags: { name: 'sdk' } } });
    assert.equal(direct.content[0].text, 'hello, sdk\n');
    const failed = await client.callTool({ name: 'fixture_fail', arguments: {} });
    assert.equal(failed.isError, true);
    assert.equal(JSON.parse(failed.content[0].text).code, 'command_failed');
    const thrown = await client.callTool({ name: 'execute', arguments: { code: 'async () => { throw new Error("no") }' } });
    assert.equal(thrown.isError, true);
    assert.equal(JSON.parse(thrown.content[0].text).code, 'guest_error');

    // A run that times out inside a long upstream call: the call is cancelled
    // upstream and the upstream keeps serving.
    const slow = await client.callTool({ name: 'execute', arguments: { timeout: 500,
      code: 'async () => codemode.everything.trigger_long_running_operation({ duration: 60, steps: 2 })' } });
    assert.equal(JSON.parse(slow.content[0].text).code, 'timeout');
    const again = await client.callTool({ name: 'execute', arguments: {
      code: 'async () => codemode.everything.echo({ message: "still here" })' } });
    assert.equal(again.structuredContent.value, 'Echo: still here');
    // TypeScript is the default: the model writes what the declarations show.
    const typed = await client.callTool({ name: 'execute', arguments: { code: [
      'async (): Promise<string> => {',
      '  interface Echoed { content?: unknown }',
      '  const r = await codemode.everything.echo({ message: "typed" as string }) satisfies string;',
      '  const g: { stdout: string } = await codemode.fixture_greet({ flags: { name: "ts" } });',
      '  return `${r} / ${g.stdout!}`;',
      '}'].join('\n') } });
    assert.equal(typed.structuredContent.value, 'Echo: typed / hello, ts\n', JSON.stringify(typed));
    // An enum has no erasable form: a compile_error saying what to write, at its line.
    const enumRun = await client.callTool({ name: 'execute', arguments: {
      code: 'async () => {\n  enum Color { Red }\n  return Color.Red;\n}' } });
    assert.equal(enumRun.isError, true);
    const enumFailure = JSON.parse(enumRun.content[0].text);
    assert.equal(enumFailure.code, 'compile_error');
    assert.match(enumFailure.message, /TypeScript: enum .*as const.* at \(eval\):2:3/);
    // Asked for JavaScript, an annotation is JavaScript's syntax error.
    const plain = await client.callTool({ name: 'execute', arguments: { language: 'javascript',
      code: 'async () => { const x: number = 1; return x; }' } });
    assert.equal(JSON.parse(plain.content[0].text).code, 'compile_error');
    const ruby = await client.callTool({ name: 'execute', arguments: { language: 'ruby',
      code: "Codemode::Everything.echo(message: 'from ruby') + ' / ' + Codemode.fixture_greet(flags: {name: 'rb'})['stdout']" } });
    assert.equal(ruby.structuredContent.value, 'Echo: from ruby / hello, rb\n', JSON.stringify(ruby));

    await cancelLongRun(client, 'stdio-direct');
  } finally {
    await client.close();
  }
});

test('stdio: compact mode offers search_tools, get_tool_details and call_tool', async () => {
  const client = await stdioClient(['--mcp-mode', 'compact']);
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['execute', 'search_tools', 'get_tool_details', 'call_tool']);
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'greet' } });
    assert.deepEqual(found.structuredContent.tools.map((t) => t.name), ['fixture_greet']);
    const details = await client.callTool({ name: 'get_tool_details', arguments: { name: 'fixture_greet' } });
    assert.equal(details.structuredContent.inputSchema.type, 'object');
    const ran = await client.callTool({ name: 'call_tool', arguments: { name: 'fixture_greet', input: { flags: { name: 'compact' } } } });
    assert.equal(ran.content[0].text, 'hello, compact\n');
  } finally {
    await client.close();
  }
});

test('stdio: compact mode code finds, reads and calls any of 1,000 commands and the upstream tools', async () => {
  const lines = ['corral: 1', 'name: gen', 'executable: /bin/echo', 'confinement: host',
    'description: generated', 'commands:'];
  for (let i = 0; i < 1000; i++) {
    lines.push(`  - name: op${i}`, `    description: Operation ${i} of a large catalogue`,
      '    flags:', '      - {name: target, type: string, description: what to act on}');
  }
  const big = path.join(scratch, 'thousand.yaml');
  writeFileSync(big, lines.join('\n') + '\n');
  const client = await stdioClient(['--mcp-mode', 'compact'], [manifest, big]);
  try {
    const { tools } = await client.listTools();
    const description = tools.find((t) => t.name === 'execute').description;
    assert.ok(description.length <= 8192, `${description.length} characters`);
    assert.match(description, /search\(query: string/);
    const ran = await client.callTool({
      name: 'execute',
      arguments: {
        code: `async () => {
          const hits: { name: string }[] = await codemode.search('op512');
          const declaration = await codemode.describe(hits[0].name);
          const out = await codemode.gen_op512({ flags: { target: 'x' } });
          const echo = (await codemode.search('echo'))[0].name;
          const echoed = await codemode.everything.echo({ message: 'found' });
          return { first: hits[0].name, typed: declaration.includes('target?: string'),
                   out: out.stdout, echo, echoed, described: await codemode.describe(echo) };
        }`,
      },
    });
    assert.ok(!ran.isError, JSON.stringify(ran));
    const v = ran.structuredContent.value;
    assert.equal(v.first, 'codemode.gen_op512');
    assert.equal(v.typed, true, JSON.stringify(v));
    assert.equal(v.out, 'op512 --target=x --\n');
    assert.equal(v.echo, 'codemode.everything.echo');
    assert.match(v.described, /echo\(input: \{/);
    assert.match(JSON.stringify(v.echoed), /found/);

    // docs/mcp.md's example, as written.
    const doc = readFileSync(path.join(root, 'docs/mcp.md'), 'utf8');
    const example = doc.split('upstream tools alike; the e2e suite runs this one')[1].split('```ts\n')[1].split('```')[0];
    const documented = await client.callTool({ name: 'execute', arguments: { code: example } });
    assert.ok(!documented.isError, JSON.stringify(documented));
    assert.match(documented.structuredContent.value, /fixture_greet\(input: \{/);
  } finally {
    await client.close();
  }
});

test('stdio: what a cut drops is a resource_link the SDK client reads whole or page by page', async () => {
  const client = await stdioClient(['--mcp-result-budget', '1KiB']);
  try {
    const ran = await client.callTool({
      name: 'execute',
      arguments: { code: `async () => { console.log('0123456789'.repeat(5000));
        return Array.from({ length: 2000 }, (_, i) => ({ i })); }` },
    });
    assert.equal(ran.structuredContent.truncated, true);
    const links = Object.fromEntries(ran.content.filter((b) => b.type === 'resource_link').map((b) => [b.name, b]));
    assert.deepEqual(Object.keys(links).sort(), ['stdout.txt', 'value.json'], JSON.stringify(ran.content));
    const whole = await client.readResource({ uri: links['value.json'].uri });
    const value = JSON.parse(whole.contents[0].text);
    assert.equal(value.length, 2000);
    assert.equal(value[1999].i, 1999);
    assert.equal(whole.contents[0].text.length, links['value.json'].size);
    // Paged: 50,001 bytes of stdout in 16 KiB pages, put back together.
    let out = '';
    for (let offset = 0; ; offset += 16384) {
      const page = await client.readResource({ uri: `${links['stdout.txt'].uri}?offset=${offset}&length=16384` });
      if (page.contents[0].text === '') break;
      out += page.contents[0].text;
    }
    assert.equal(out, '0123456789'.repeat(5000) + '\n');
    const { resources } = await client.listResources();
    assert.equal(resources.length, 2);
    await assert.rejects(client.readResource({ uri: 'corral://results/00000000000000000000000000000000/value.json' }),
      /Resource not found/);
    // And the server goes on.
    const next = await client.callTool({ name: 'execute', arguments: { code: 'async () => 1 + 1' } });
    assert.equal(next.structuredContent.value, 2);
  } finally {
    await client.close();
  }
});

// Approvals: a function listed with --mcp-approve runs from code mode only
// after the SDK client's elicitation handler accepts; decline and cancel
// leave it unrun; a client without elicitation is refused, never run.
const APPROVED = `async () => {
  try { return (await codemode.fixture_greet({ flags: { name: 'approved' } })).stdout; }
  catch (e) { return 'refused: ' + e.message; }
}`;

function elicitingClient(answers) {
  const client = new Client({ name: 'corral-e2e', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    return { action: answers.shift() };
  });
  return { client, asked };
}

test('approvals: elicitation accept, decline and cancel over stdio and Streamable HTTP', async () => {
  const { client, asked } = elicitingClient(['accept', 'decline', 'cancel']);
  await client.connect(new StdioClientTransport({
    command: corral, args: ['mcp', '--mcp-manifest', manifest, '--mcp-approve', 'fixture_greet', '--max-workers', '1'],
    stderr: 'ignore',
  }));
  try {
    const values = [];
    for (let i = 0; i < 3; i++) {
      const r = await client.callTool({ name: 'execute', arguments: { code: APPROVED } });
      values.push(r.structuredContent.value);
    }
    assert.equal(values[0], 'hello, approved\n');
    assert.match(values[1], /^refused: cancelled: the user declined codemode.fixture_greet; nothing was run/);
    assert.match(values[2], /^refused: cancelled: the user cancelled the approval of codemode.fixture_greet/);
    assert.equal(asked.length, 3);
    assert.match(asked[0], /codemode\.fixture_greet .*"approved"/s);
    // Not listed: runs without asking.
    const free = await client.callTool({ name: 'execute', arguments: {
      code: 'async () => (await codemode.fixture_fail({}).catch((e) => String(e.message).split(":")[0]))' } });
    assert.equal(free.structuredContent.value, 'command_failed');
    assert.equal(asked.length, 3);
  } finally {
    await client.close();
  }

  const server = await serve(['--mcp-approve', 'fixture_greet']);
  try {
    const http = elicitingClient(['accept']);
    await http.client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const r = await http.client.callTool({ name: 'execute', arguments: { code: APPROVED } });
    assert.equal(r.structuredContent.value, 'hello, approved\n');
    assert.equal(http.asked.length, 1);
    await http.client.close();

    const { client: plain } = await httpClient(server.url);
    const refused = await plain.callTool({ name: 'execute', arguments: { code: APPROVED } });
    assert.match(refused.structuredContent.value,
      /^refused: invalid_request: codemode.fixture_greet needs the user's approval .*no elicitation capability/);
    await plain.close();
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('stdio: malformed JSON-RPC is answered and the server stays up', async () => {
  const child = spawn(corral, ['mcp', '--mcp-manifest', manifest], { stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value);
  child.stdin.write('{"this is": not json\n');
  assert.equal((await next()).error.code, -32700);
  child.stdin.write('[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n');
  assert.equal((await next()).error.code, -32600);
  child.stdin.write('{"jsonrpc":"2.0","id":2}\n');
  assert.equal((await next()).error.code, -32600);
  child.stdin.write('{"jsonrpc":"2.0","id":3,"method":"ping"}\n');
  assert.deepEqual((await next()).result, {});
  child.stdin.end();
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
});

// A bound command printing bytes that are not UTF-8, through the SDK (which
// checks structuredContent against the tool's outputSchema): the text reads
// U+FFFD, the result says `replaced`, and the session answers the next call.
async function checkNotUtf8(client) {
  const bad = await client.callTool({ name: 'bytes_bad_byte', arguments: {} });
  assert.equal(bad.isError, undefined);
  assert.deepEqual(bad.structuredContent,
    { stdout: 'a\uFFFDb', stderr: '\uFFFD', exitCode: 0, truncated: false, replaced: true });
  const cut = await client.callTool({ name: 'bytes_cut_char', arguments: {} });
  assert.deepEqual(cut.structuredContent,
    { stdout: 'aaaaaaaa', stderr: '', exitCode: 0, truncated: true });
  const code = await client.callTool({ name: 'execute', arguments: {
    code: 'async () => (await codemode.bytes_bad_byte({})).stdout' } });
  assert.equal(code.isError, undefined);
  assert.equal(code.structuredContent.value, 'a\uFFFDb');
  assert.deepEqual(await client.ping(), {});
}

test('stdio and Streamable HTTP: command output that is not UTF-8 is replaced, marked, survived', async () => {
  const notUtf8 = path.join(root, 'tests/mcp/fixtures/not_utf8.yaml');
  const transport = new StdioClientTransport({
    command: corral, args: ['mcp', '--mcp-manifest', notUtf8, '--max-workers', '1'], stderr: 'ignore',
  });
  const client = new Client({ name: 'corral-e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    await checkNotUtf8(client);
  } finally {
    await client.close();
  }
  const child = spawn(corral, ['serve', '--port', '0', '--admin', 'false', '--max-workers', '1',
    '--mcp-manifest', notUtf8], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    let url;
    for await (const line of readline.createInterface({ input: child.stdout })) {
      const match = /executor on ws:\/\/([^/]+)\//.exec(line);
      if (match) { url = `http://${match[1]}/mcp`; break; }
    }
    const { client: remote } = await httpClient(url);
    try {
      await checkNotUtf8(remote);
    } finally {
      await remote.close();
    }
    const health = await fetch(url.replace('/mcp', '/healthz'));
    assert.equal(health.status, 200);
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

test('Streamable HTTP: tools, execute, a direct tool, cancellation, session deletion', async () => {
  const server = await serve();
  try {
    const { client, transport } = await httpClient(server.url);
    const { tools } = await client.listTools();
    assert.equal(tools[0].name, 'execute');
    checkExecute(await client.callTool({ name: 'execute', arguments: { code: CODE } }));
    const direct = await client.callTool({ name: 'fixture_greet', arguments: {} });
    assert.equal(direct.structuredContent.exitCode, 0);
    // Progress notifications reach the SDK's callback over SSE.
    const progress = [];
    await client.callTool({ name: 'execute', arguments: { code: 'async () => codemode.fixture_greet({})' } },
      undefined, { onprogress: (p) => progress.push(p) });
    assert.ok(progress.length >= 1);
    await cancelLongRun(client, 'http-direct');

    const session = transport.sessionId;
    assert.match(session, /^[0-9a-f]{32}$/);
    await transport.terminateSession();
    const after = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(after.status, 404);
    await client.close();
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

// Issue 15: the daemon's /metrics with bound commands and an upstream server
// (calls by outcome, slots by state, upstream up and restarts) is a scrape
// promtool accepts, and the counters move with the calls made.
test('Streamable HTTP: /metrics counts bound-command calls, slots and upstreams; promtool accepts it', async () => {
  const server = await serve(['--metrics']);
  try {
    const { client } = await httpClient(server.url);
    const direct = await client.callTool({ name: 'fixture_greet', arguments: {} });
    assert.equal(direct.structuredContent.exitCode, 0);
    checkExecute(await client.callTool({ name: 'execute', arguments: { code: CODE } }));
    await client.close();

    const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    if (check.error?.code === 'ENOENT') {
      console.log('promtool is not installed: the scrape format is not checked');
    } else {
      assert.equal(check.status, 0, `promtool: ${check.stdout}${check.stderr}\n${text}`);
    }
    assert.match(text, /^corral_command_calls_total\{binding="fixture",outcome="ok"\} 2$/m);
    assert.match(text, /^corral_command_calls_total\{binding="fixture",outcome="busy"\} 0$/m);
    assert.match(text, /^corral_command_runs_total\{binding="fixture"\} 2$/m);
    assert.match(text, /^corral_command_slots\{binding="fixture",state="idle"\} 2$/m);
    assert.match(text, /^corral_command_slots\{binding="fixture",state="cleanup_failed"\} 0$/m);
    assert.match(text, /^corral_upstream_up\{upstream="everything"\} 1$/m);
    assert.match(text, /^corral_upstream_restarts_total\{upstream="everything"\} 0$/m);
    // Bounded: one series per binding and code, not per call.
    assert.equal(text.split('\n').filter((l) => l.startsWith('corral_command_calls_total{')).length,
      1 + text.split('\n').filter((l) => l.startsWith('corral_command_failures_total{')).length);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('an upstream over Streamable HTTP: corral mcp fronting corral serve', async () => {
  const server = await serve();
  try {
    const transport = new StdioClientTransport({
      command: corral,
      args: ['mcp', '--max-workers', '1', '--mcp-upstream', JSON.stringify({ inner: { url: server.url } })],
      stderr: 'ignore',
    });
    const client = new Client({ name: 'corral-e2e', version: '1.0.0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['execute']);
    assert.match(tools[0].description, /inner: \{/);
    const result = await client.callTool({ name: 'execute', arguments: {
      code: `async () => {
        const greeting = await codemode.inner.fixture_greet({ flags: { name: 'nested' } });
        try { await codemode.inner.fixture_fail({}); } catch (e) { return [greeting.stdout, e.message]; }
      }` } });
    const [greeting, failure] = result.structuredContent.value;
    assert.equal(greeting, 'hello, nested\n');
    assert.match(failure, /command_failed/);
    await client.close();
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

// `seq 1 1000000` (6.9 MB) as a direct tool: the SDK checks structuredContent
// against the tool's outputSchema (cached by listTools) and used to reject the
// cut result, which had lost stderr and exitCode and gained a "[cut]" key.
test('a command result past the result budget keeps its outputSchema (the SDK validates it)', async () => {
  const seq = path.join(root, 'tests/mcp/fixtures/seq.yaml');
  const client = new Client({ name: 'corral-e2e', version: '1.0.0' });
  await client.connect(new StdioClientTransport({
    command: corral, args: ['mcp', '--mcp-manifest', seq, '--max-workers', '1'], stderr: 'ignore' }));
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.find((t) => t.name === 'seq').outputSchema.required.includes('exitCode'));
    const r = await client.callTool({ name: 'seq', arguments: { args: ['1', '1000000'] } });
    assert.equal(r.isError, undefined);
    const s = r.structuredContent;
    assert.deepEqual(Object.keys(s).sort(), ['exitCode', 'stderr', 'stdout', 'truncated']);
    assert.equal(s.exitCode, 0);
    assert.equal(s.stderr, '');
    assert.equal(s.truncated, true);
    assert.ok(s.stdout.startsWith('1\n2\n3\n'));
    assert.match(s.stdout, /\n\[cut: \d+ more bytes\]$/);
    assert.ok(Buffer.byteLength(JSON.stringify(s)) <= 64 * 1024);
    assert.ok(r.content.some((c) => /result budget/.test(c.text)));
  } finally {
    await client.close();
  }
});

// Starts fixture_spawn through `client` and resolves once its process tree
// runs (it writes its pids to a FIFO); returns the pending call.
async function runningSpawn(client, name) {
  const fifo = path.join(scratch, name);
  execFileSync('mkfifo', [fifo]);
  const call = client.callTool({ name: 'fixture_spawn', arguments: { flags: { pids: fifo } } },
    undefined, { timeout: 60000 });
  const pids = (await fs.readFile(fifo, 'utf8')).trim().split('\n').map(Number);
  assert.equal(pids.length, 3);
  return { call, pids };
}

function assertUnavailable(result) {
  assert.equal(result.isError, true, JSON.stringify(result));
  const failure = JSON.parse(result.content[0].text);
  assert.equal(failure.code, 'unavailable');
  assert.equal(failure.retryable, true);
}

test('stdio: a call in flight when corral mcp gets SIGTERM is answered, not dropped', async () => {
  const transport = new StdioClientTransport({
    command: corral, args: ['mcp', '--mcp-manifest', manifest, '--max-workers', '1'], stderr: 'ignore' });
  const client = new Client({ name: 'corral-e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { call, pids } = await runningSpawn(client, 'stdio-sigterm');
    process.kill(transport.pid, 'SIGTERM');
    assertUnavailable(await call);
    assert.ok(await gone(pids), `still running: ${pids.filter(alive)}`);
  } finally {
    await client.close();
  }
});

test('Streamable HTTP: a call in flight when corral serve stops is answered, not dropped', async () => {
  const server = await serve();
  const { client } = await httpClient(server.url);
  try {
    const { call, pids } = await runningSpawn(client, 'http-stop');
    const stopped = server.stop();
    assertUnavailable(await call);
    assert.equal(await stopped, 0);
    assert.ok(await gone(pids), `still running: ${pids.filter(alive)}`);
  } finally {
    await client.close();
  }
});

// A raw request with any Host header (fetch does not let a caller set it).
function raw(port, { method = 'POST', headers = {}, body = '' }) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
    (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('Streamable HTTP: DNS rebinding refused, malformed input answered, bearer token required', async () => {
  const server = await serve(['--auth-token', 'sesame']);
  try {
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const auth = { authorization: 'Bearer sesame' };
    assert.equal((await raw(server.port, { headers: { ...auth, origin: 'http://evil.example' }, body: init })).status, 403);
    assert.equal((await raw(server.port, { headers: { ...auth, host: 'evil.example' }, body: init })).status, 403);
    const noToken = await raw(server.port, { body: init });
    assert.equal(noToken.status, 401);
    assert.equal(noToken.headers['www-authenticate'], 'Bearer');
    const parse = await raw(server.port, { headers: auth, body: '{"jsonrpc": ' });
    assert.equal(parse.status, 400);
    assert.equal(JSON.parse(parse.body).error.code, -32700);
    const batch = await raw(server.port, { headers: auth, body: `[${init}]` });
    assert.equal(batch.status, 400);
    assert.equal(JSON.parse(batch.body).error.code, -32600);
    const ok = await raw(server.port, { headers: { ...auth, origin: 'http://localhost:6274' }, body: init });
    assert.equal(ok.status, 200);
    const session = ok.headers['mcp-session-id'];
    const invalid = await raw(server.port, { headers: { ...auth, 'mcp-session-id': session }, body: '{"jsonrpc":"2.0","id":2,"method":9}' });
    assert.equal(JSON.parse(invalid.body).error.code, -32600);

    const { client } = await httpClient(server.url, auth);
    assert.ok((await client.listTools()).tools.length > 0);
    await client.close();
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('Streamable HTTP: failed initializes take no session slot', async () => {
  const server = await serve(['--mcp-max-sessions', '2']);
  try {
    const bad = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
      { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: 7 } },
      { jsonrpc: '2.0', id: true, method: 'initialize', params: { protocolVersion: '2025-11-25' } },
    ];
    for (let round = 0; round < 3; ++round) {
      for (const body of bad) {
        const r = await raw(server.port, { body: JSON.stringify(body) });
        assert.equal(r.status, 400, r.body);
        assert.equal(r.headers['mcp-session-id'], undefined);
        assert.ok(JSON.parse(r.body).error);
      }
    }
    // Nine refused initializes later, both slots are still free.
    const clients = [await httpClient(server.url), await httpClient(server.url)];
    for (const { client } of clients) assert.ok((await client.listTools()).tools.length > 0);
    const third = await raw(server.port, { body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
    assert.equal(third.status, 503);
    for (const { client } of clients) await client.close();
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

// The configurations docs/mcp.md shows, run as a client would run them.
test('docs/mcp.md: every client configuration shown works', async () => {
  const doc = readFileSync(path.join(root, 'docs/mcp.md'), 'utf8');
  // VS Code's file calls them "servers"; the other clients "mcpServers".
  const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]))
    .filter((b) => b.mcpServers || b.servers);
  assert.ok(blocks.length >= 3);
  const server = await serve(['--auth-token', 'TOKEN']);
  try {
    for (const block of blocks) {
      for (const [name, entry] of Object.entries(block.mcpServers ?? block.servers)) {
        if (block.servers) assert.ok(['stdio', 'http'].includes(entry.type), `${name}: VS Code needs a type`);
        let client;
        if (entry.command) {
          const args = entry.args.map((a) => (a === '/etc/corral/tools.yaml' ? manifest : a));
          client = new Client({ name, version: '1.0.0' });
          await client.connect(new StdioClientTransport({ command: corral, args, stderr: 'ignore' }));
        } else {
          const url = new URL(entry.url);
          url.port = String(server.port);
          ({ client } = await httpClient(url.href, entry.headers ?? {}));
        }
        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === 'fixture_greet'), `${name}: ${tools.map((t) => t.name)}`);
        await client.close();
      }
    }
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

// `corral mcp config CLIENT` prints what each client's file takes; each
// printed entry is started (stdio) or reached (HTTP) as that client would.
test('corral mcp config: every client\'s entry works, and --write merges', async () => {
  const shapes = { 'claude-desktop': 'mcpServers', 'claude-code': 'mcpServers', vscode: 'servers', cursor: 'mcpServers' };
  const printed = (args) => {
    const out = spawnSync(corral, ['mcp', 'config', ...args], { encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    return JSON.parse(out.stdout);
  };
  for (const [clientName, key] of Object.entries(shapes)) {
    const entry = printed([clientName, '--manifest', manifest, '--arg', '--max-workers', '--arg', '1'])[key].corral;
    assert.equal(entry.type, clientName === 'claude-code' || clientName === 'vscode' ? 'stdio' : undefined);
    assert.ok(path.isAbsolute(entry.command), entry.command);
    const client = new Client({ name: clientName, version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: entry.command, args: entry.args, stderr: 'ignore' }));
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'fixture_greet'), `${clientName}: ${tools.map((t) => t.name)}`);
    await client.close();
  }
  const server = await serve(['--auth-token', 'TOKEN']);
  try {
    for (const clientName of ['claude-code', 'vscode', 'cursor']) {
      const entry = printed([clientName, '--url', server.url, '--header', 'Authorization: Bearer TOKEN'])[shapes[clientName]].corral;
      assert.equal(entry.url, server.url);
      if (clientName !== 'cursor') assert.equal(entry.type, 'http');
      const { client } = await httpClient(entry.url, entry.headers);
      assert.ok((await client.listTools()).tools.length > 0);
      await client.close();
    }
  } finally {
    assert.equal(await server.stop(), 0);
  }
  // Claude Desktop's file starts processes only: a bridge to the URL.
  const desktop = printed(['claude-desktop', '--url', 'http://127.0.0.1:1/mcp']).mcpServers.corral;
  assert.deepEqual(desktop, { command: 'npx', args: ['-y', 'mcp-remote', 'http://127.0.0.1:1/mcp'] });

  // --write keeps what the file had, replaces only its own name, refuses
  // what it would lose.
  const file = path.join(scratch, 'vscode-mcp.json');
  writeFileSync(file, JSON.stringify({ inputs: [{ id: 'k' }], servers: { other: { type: 'stdio', command: 'x' }, corral: { old: true } } }));
  const wrote = spawnSync(corral, ['mcp', 'config', 'vscode', '--write', '--file', file, '--manifest', manifest], { encoding: 'utf8' });
  assert.equal(wrote.status, 0, wrote.stderr);
  assert.match(wrote.stderr, /replaced "corral"/);
  const merged = JSON.parse(readFileSync(file, 'utf8'));
  assert.deepEqual(merged.inputs, [{ id: 'k' }]);
  assert.deepEqual(merged.servers.other, { type: 'stdio', command: 'x' });
  assert.equal(merged.servers.corral.type, 'stdio');
  const commented = path.join(scratch, 'commented.json');
  writeFileSync(commented, '{ // mine\n "servers": {} }');
  const refused = spawnSync(corral, ['mcp', 'config', 'vscode', '--write', '--file', commented], { encoding: 'utf8' });
  assert.equal(refused.status, 2);
  assert.match(refused.stderr, /not plain JSON/);
  assert.equal(readFileSync(commented, 'utf8'), '{ // mine\n "servers": {} }');
  const nested = path.join(scratch, 'new', 'dir', 'mcp.json');
  assert.equal(spawnSync(corral, ['mcp', 'config', 'cursor', '--write', '--file', nested]).status, 0);
  assert.ok(JSON.parse(readFileSync(nested, 'utf8')).mcpServers.corral.command);
});
