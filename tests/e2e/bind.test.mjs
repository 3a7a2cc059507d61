// End-to-end: `corral bind PROGRAM` writes a manifest from the program's own
// help, `corral tools --manifest -` reads it from a pipe, and the official MCP
// SDK client calls one of its commands through `corral mcp` (directly and from
// code mode). For git (parse-options help), restic (Cobra, from Debian) and
// tests/bind/fixtures/notes (Python's argparse).
//
//   CORRAL_BINARY=build/test/apps/corral/corral node --test tests/e2e/bind.test.mjs
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const corral = process.env.CORRAL_BINARY ?? path.join(root, 'build/test/apps/corral/corral');
const scratch = mkdtempSync(path.join(tmpdir(), 'corral-bind-e2e-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const installed = (program) => ['/usr/bin', '/bin', '/usr/local/bin'].some(
  (dir) => existsSync(path.join(dir, program)));

// `corral bind PROGRAM | corral tools --manifest -`, as a shell would pipe it.
function bindAndList(program) {
  const bound = spawnSync(corral, ['bind', program], { encoding: 'utf8' });
  assert.equal(bound.status, 0, bound.stderr);
  assert.match(bound.stderr, /corral bind: \d+ help pages/);
  const listed = spawnSync(corral, ['tools', '--manifest', '-'], { input: bound.stdout, encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  const manifest = path.join(scratch, `${path.basename(program)}.yaml`);
  writeFileSync(manifest, bound.stdout);
  return { manifest, operations: JSON.parse(listed.stdout).operations };
}

async function mcpClient(manifest) {
  const transport = new StdioClientTransport({
    command: corral, args: ['mcp', '--mcp-manifest', manifest, '--max-workers', '1'], stderr: 'ignore',
  });
  const client = new Client({ name: 'corral-bind-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const cases = [
  {
    program: 'git', operation: 'git_init', flag: 'bare', least: 20,
    input: { flags: { initial_branch: undefined }, args: ['/tmp/r'] },
    expect: /Initialized empty Git repository in \/tmp\/r\/\.git\//,
    code: 'async () => (await codemode.git_init({ flags: { bare: true }, args: ["/tmp/b"] })).stdout',
    codeExpect: /Initialized empty Git repository in \/tmp\/b\//,
  },
  {
    program: 'restic', operation: 'restic_version', flag: 'json', least: 20, input: {},
    expect: /^restic \d/,
    code: 'async () => (await codemode.restic_version({})).stdout',
    codeExpect: /^restic \d/,
  },
  {
    program: path.join(root, 'tests/bind/fixtures/notes'), operation: 'notes_add', flag: 'priority', least: 3,
    input: { flags: { priority: 'high', tag: ['a', 'b'] }, args: ['milk'] },
    expect: /"priority": "high", "tag": \["a", "b"\], "text": "milk"/,
    code: 'async () => (await codemode.notes_list({ flags: { limit: 3 } })).stdout',
    codeExpect: /"limit": 3/,
  },
];

for (const c of cases) {
  const name = path.basename(c.program);
  test(`corral bind ${name}: listed with typed flags, called through corral mcp`, {
    skip: path.isAbsolute(c.program) || installed(c.program) ? false : `${c.program} is not installed`,
  }, async () => {
    const { manifest, operations } = bindAndList(c.program);
    assert.ok(operations.length >= c.least, `${operations.length} operations`);
    const op = operations.find((o) => o.name === c.operation);
    assert.ok(op, `${c.operation} among ${operations.map((o) => o.name).join(' ')}`);
    assert.ok(op.inputSchema.properties.flags.properties[c.flag], JSON.stringify(op.inputSchema));

    const client = await mcpClient(manifest);
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === c.operation);
      assert.ok(tool, 'the operation is an MCP tool');
      assert.ok(tool.inputSchema.properties.flags.properties[c.flag]);
      const input = JSON.parse(JSON.stringify(c.input));  // drops the undefined
      const direct = await client.callTool({ name: c.operation, arguments: input });
      assert.notEqual(direct.isError, true, JSON.stringify(direct));
      assert.match(direct.content[0].text, c.expect);
      const coded = await client.callTool({ name: 'execute', arguments: { code: c.code } });
      assert.notEqual(coded.isError, true, JSON.stringify(coded));
      assert.match(String(coded.structuredContent.value), c.codeExpect);
      // A value the help's types refuse never reaches the program.
      if (c.operation === 'notes_add') {
        const refused = await client.callTool({ name: 'notes_add', arguments: { flags: { priority: 'urgent' } } });
        assert.equal(refused.isError, true);
        assert.equal(JSON.parse(refused.content[0].text).code, 'invalid_request');
      }
    } finally {
      await client.close();
    }
  });
}

test('corral bind refuses what it cannot read, with the failure code', () => {
  const missing = spawnSync(corral, ['bind', '/nonexistent/tool'], { encoding: 'utf8' });
  assert.equal(missing.status, 1);
  assert.match(missing.stderr, /^corral: setup_error: executable: /);
  const silent = spawnSync(corral, ['bind', '/bin/sh'], { encoding: 'utf8' });
  assert.equal(silent.status, 2);
  assert.match(silent.stderr, /^corral: invalid_request: the help of sh shows no flags and no commands/);
  assert.equal(silent.stdout, '');
});
