#!/usr/bin/env bash
# Executor server vs the Node baseline, in one run, with one load generator:
# bench/server_bench drives the embedded corral server (2 workers), then the
# npm ws + isolated-vm server of ws_baseline.js (2 isolates), with the same
# workload. Tables go to stderr, one JSON line per server to stdout.
#
#   bench/peers/ws_run.sh [BUILD_DIR] [--seconds 3] [--many 16]
#   SKIP_INSTALL=1 bench/peers/ws_run.sh ...   # reuse an existing node_modules
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build/test}"
shift || true
bench="$build/bench/server_bench"
[[ -x "$bench" ]] || { echo "ws_run.sh: build server_bench first ($bench)" >&2; exit 1; }

cd "$here"
if [[ "${SKIP_INSTALL:-0}" != 1 || ! -d node_modules/ws || ! -d node_modules/isolated-vm ]]; then
  export npm_config_nodedir="${NODEDIR:-/usr}" npm_config_build_from_source=true
  npm ci --no-audit --no-fund >&2
fi

"$bench" --workers 2 "$@"

fifo="$(mktemp -u)"
mkfifo "$fifo"
exec 3<>"$fifo"
node ws_baseline.js --workers=2 <&3 >"$fifo.out" &
baseline=$!
# The baseline's stdin is the fifo opened read-write, so it never sees EOF:
# stop it with a signal.
trap 'exec 3>&-; kill "$baseline" 2>/dev/null; wait "$baseline" 2>/dev/null || true; rm -f "$fifo" "$fifo.out"' EXIT
for _ in $(seq 100); do [[ -s "$fifo.out" ]] && break; sleep 0.1; done
port="$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$fifo.out")"
"$bench" --url "ws://127.0.0.1:$port" "$@"
