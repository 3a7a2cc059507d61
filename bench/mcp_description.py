#!/usr/bin/env python3
# bench/mcp_description.py: how long the MCP `execute` tool's description
# grows with the catalogue (issue 18), read from a real `corral mcp` over
# stdio. For each size N it writes a manifest of N commands (three typed
# flags each, as `corral bind` makes them) and prints the description's
# characters and a token estimate (characters / 4, the usual rule of thumb
# for English and code) in direct and compact mode.
#
#   python3 bench/mcp_description.py [build/test/apps/corral/corral]
import json
import os
import subprocess
import sys
import tempfile

corral = sys.argv[1] if len(sys.argv) > 1 else 'build/test/apps/corral/corral'


def manifest(n):
    lines = ['corral: 1', 'name: tool', 'executable: /bin/echo', 'description: a generated tool',
             'commands:']
    for i in range(n):
        lines += [f'  - name: cmd{i}',
                  f'    description: Command number {i} of the generated catalogue',
                  '    flags:',
                  '      - {name: name, type: string, description: the name to act on}',
                  '      - {name: count, type: int, description: how many times}',
                  '      - {name: dry-run, type: bool, description: only say what would happen}']
    return '\n'.join(lines) + '\n'


def description(path, mode):
    requests = [
        {'jsonrpc': '2.0', 'id': 1, 'method': 'initialize',
         'params': {'protocolVersion': '2025-06-18', 'capabilities': {},
                    'clientInfo': {'name': 'bench', 'version': '1'}}},
        {'jsonrpc': '2.0', 'method': 'notifications/initialized'},
        {'jsonrpc': '2.0', 'id': 2, 'method': 'tools/list'},
    ]
    text = ''.join(json.dumps(r) + '\n' for r in requests)
    out = subprocess.run([corral, 'mcp', '--mcp-manifest', path, '--mcp-mode', mode],
                         input=text, capture_output=True, text=True, timeout=60).stdout
    for line in out.splitlines():
        message = json.loads(line)
        if message.get('id') == 2:
            return message['result']['tools'][0]['description']
    raise SystemExit('no tools/list answer: ' + out[:500])


print('| commands | mode | description (characters) | tokens (about) |')
print('|---|---|---|---|')
for n in (1, 10, 100, 250, 1000):
    with tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False) as f:
        f.write(manifest(n))
    try:
        for mode in ('direct', 'compact'):
            d = description(f.name, mode)
            print(f'| {n} | {mode} | {len(d):,} | {len(d) // 4:,} |')
    finally:
        os.unlink(f.name)
