#!/usr/bin/env bash
# Install isolated-vm (built from source against the local Node headers) and
# run the fresh-context benchmark. JSON goes to stdout, a table to stderr.
#
#   bench/peers/run.sh [--iterations=2000] [--warmup=200] [--only=trivial,json] [--timeout=MS]
#   SKIP_INSTALL=1 bench/peers/run.sh ...   # reuse an existing node_modules
set -euo pipefail
cd "$(dirname "$0")"

for tool in node npm python3 make g++; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is required" >&2; exit 1; }
done

# node-gyp must not fetch headers from nodejs.org: use the installed ones
# (/usr/include/node from the nodesource package). Override with NODEDIR=...
NODEDIR="${NODEDIR:-/usr}"
if [[ ! -f "$NODEDIR/include/node/node_version.h" ]]; then
  echo "run.sh: no Node headers under $NODEDIR/include/node (set NODEDIR)" >&2
  exit 1
fi
export npm_config_nodedir="$NODEDIR"
# Skip prebuild-install's GitHub download attempt; build with node-gyp directly.
export npm_config_build_from_source=true

if [[ "${SKIP_INSTALL:-0}" != 1 || ! -d node_modules/isolated-vm ]]; then
  npm ci --no-audit --no-fund >&2
fi

exec node isolated_vm_bench.js "$@"
