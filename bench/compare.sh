#!/usr/bin/env bash
# bench/compare.sh: corral and every anchor of its performance goals, in one
# sitting, interleaved, and the table of ratios (BENCHMARKS.md holds its output).
#
#   bench/compare.sh [BUILD_DIR] [ROUNDS]      BUILD_DIR: a Release build with
#                                              the benchmarks (default build/bench)
#   SKIP_INSTALL=1 bench/compare.sh ...        reuse bench/peers/node_modules
#   SECONDS_PER=2 bench/compare.sh ...         seconds per server scenario
#
# Each round runs, one after the other: the bare V8 floor (bare_v8_context),
# corral's in-process fresh context (sandbox_bench), isolated-vm's
# (bench/peers/isolated_vm_bench.js), corral's executor server and the npm ws +
# isolated-vm baseline (server_bench against both, every standard workload on
# 1 and 4 connections), the server with its default retirement, none and a
# bare count of 1,000, one worker against two on `compute`, an idle worker's
# memory and a thread hand-off (pool_bench), a process start and the daemon's own memory
# (cli_bench). The table takes the
# median of each figure over the rounds, so a neighbour's burst moves one
# round, not the ratio. Every run of every
# benchmark compiles a source it has not seen (bench/unique_source.hpp).
# Run it on a quiet machine: check that nothing else of yours is running.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-$here/../build/bench}" && pwd)"
rounds="${2:-3}"
seconds="${SECONDS_PER:-2}"
for b in sandbox_bench server_bench pool_bench cli_bench; do
  [[ -x "$build/bench/$b" ]] || { echo "compare.sh: build $b first ($build/bench/$b)" >&2; exit 1; }
done
out="$(mktemp -d)"
baseline=""
cleanup() {
  if [[ -n "$baseline" ]]; then
    kill "$baseline" 2>/dev/null || true
    wait "$baseline" 2>/dev/null || true
  fi
  rm -rf "$out"
}
trap cleanup EXIT

peers=1
if ! command -v node >/dev/null; then
  echo "compare.sh: no node: the isolated-vm anchors are left out" >&2
  peers=0
elif [[ "${SKIP_INSTALL:-0}" != 1 || ! -d "$here/peers/node_modules/isolated-vm" ]]; then
  (cd "$here/peers" && npm_config_nodedir="${NODEDIR:-/usr}" npm_config_build_from_source=true \
    npm ci --no-audit --no-fund >&2) || { echo "compare.sh: npm ci failed: no peers" >&2; peers=0; }
fi

# The floor, built once against the V8 corral links.
TMPDIR="$out" "$here/peers/bare_v8_context.sh" 10 > /dev/null
floor="$out/corral_bare_v8_context"

# The ws + isolated-vm executor, started once (its isolates are reused, as
# corral's workers are).
port=""
if ((peers)); then
  mkfifo "$out/fifo"
  exec 3<>"$out/fifo"
  (cd "$here/peers" && exec node ws_baseline.js --workers=2) <&3 > "$out/baseline.out" &
  baseline=$!
  for _ in $(seq 200); do [[ -s "$out/baseline.out" ]] && break; sleep 0.1; done
  port="$(sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$out/baseline.out")"
fi

record() { echo "$1 $2" >> "$out/figures"; }  # NAME VALUE, once per round
json_field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

echo "compare.sh: $rounds rounds from $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((round = 1; round <= rounds; round++)); do
  echo "round $round" >&2
  line="$("$floor" 3000)"
  record floor_cpu_us "$(sed -n 's/.*: [0-9.]* us wall, \([0-9.]*\) us CPU per run.*/\1/p' <<< "$line")"
  record floor_wall_us "$(sed -n 's/.*: \([0-9.]*\) us wall.*/\1/p' <<< "$line")"

  "$build/bench/sandbox_bench" --benchmark_filter='^BM_FreshContextEval$' --benchmark_min_time=2 \
    --benchmark_format=json 2> /dev/null > "$out/sandbox.json"
  record corral_inproc_cpu_us "$(json_field 'd["benchmarks"][0]["cpu_us_per_run"]' < "$out/sandbox.json")"
  record corral_inproc_p50_us "$(json_field 'd["benchmarks"][0]["p50_us"]' < "$out/sandbox.json")"
  record corral_inproc_rate "$(json_field '1e6 / d["benchmarks"][0]["real_time"]' < "$out/sandbox.json")"

  if ((peers)); then
    (cd "$here/peers" && node isolated_vm_bench.js --only=eval_1plus1 --iterations=3000) \
      2> /dev/null > "$out/ivm.json"
    sel='[r for r in d["results"] if r["name"] == "eval_1plus1"][0]'
    record ivm_inproc_cpu_us "$(json_field "$sel[\"cpu_us_per_run\"]" < "$out/ivm.json")"
    record ivm_inproc_p50_us "$(json_field "$sel[\"p50_us\"]" < "$out/ivm.json")"
    record ivm_inproc_rate "$(json_field "$sel[\"wall_runs_per_sec\"]" < "$out/ivm.json")"
  fi

  servers=(corral)
  ((peers)) && [[ -n "$port" ]] && servers+=(baseline)
  for server in "${servers[@]}"; do
    args=(--workers 2 --seconds "$seconds" --many 4)
    [[ $server == baseline ]] && args+=(--url "ws://127.0.0.1:$port")
    "$build/bench/server_bench" "${args[@]}" 2> /dev/null > "$out/server.json"
    python3 - "$server" "$out/server.json" >> "$out/figures" << 'PY'
import json, sys
server, path = sys.argv[1], sys.argv[2]
for r in json.load(open(path))["results"]:
    key = f'{server}_{r["scenario"]}_{r["connections"]}'
    print(f'{key}_rate {r["executions_per_sec"]}')
    print(f'{key}_p50_us {r["p50_us"]}')
PY
  done

  # The pool's default retirement (by growth, a count of 10,000 as a
  # backstop), none at all, and the old default of a bare 1,000 runs.
  for retire in default none 1000; do
    case "$retire" in
      default) retire_args=() ;;
      none) retire_args=(--retire-after 1000000000 --retire-on-growth 0) ;;
      *) retire_args=(--retire-after "$retire") ;;
    esac
    "$build/bench/server_bench" --workers 2 --seconds "$seconds" --many 4 --only trivial \
      "${retire_args[@]}" 2> /dev/null > "$out/retire.json"
    record "retire_${retire}_rate" "$(json_field '[r for r in d["results"] if r["connections"] == 4][0]["executions_per_sec"]' < "$out/retire.json")"
  done

  for workers in 1 2; do
    "$build/bench/server_bench" --workers "$workers" --seconds "$seconds" --many 4 --only compute \
      2> /dev/null > "$out/scale.json"
    record "compute_${workers}w_rate" "$(json_field '[r for r in d["results"] if r["connections"] == 4][0]["executions_per_sec"]' < "$out/scale.json")"
  done

  "$build/bench/pool_bench" --benchmark_filter='BM_IdleWorkerMemory' --benchmark_format=json \
    2> /dev/null > "$out/idle.json"
  record idle_worker_rss_mib "$(json_field 'd["benchmarks"][0]["rss_MiB"]' < "$out/idle.json")"
  "$build/bench/pool_bench" --benchmark_filter='BM_ThreadHandOff' --benchmark_format=json \
    2> /dev/null > "$out/handoff.json"
  record handoff_us "$(json_field 'd["benchmarks"][0]["handoff_us"]' < "$out/handoff.json")"

  "$build/bench/cli_bench" --benchmark_filter='BM_RawPosixSpawnTrue|BM_FrontCallTrue|BM_DaemonMemory' \
    --benchmark_min_time=1 --benchmark_format=json 2> /dev/null > "$out/cli.json"
  us='{"ns": 1e-3, "us": 1, "ms": 1e3, "s": 1e6}[b["time_unit"]]'
  record spawn_true_us "$(json_field "[b['real_time'] * $us for b in d['benchmarks'] if b['name'].startswith('BM_RawPosixSpawnTrue')][0]" < "$out/cli.json")"
  record call_true_us "$(json_field "[b['real_time'] * $us for b in d['benchmarks'] if b['name'].startswith('BM_FrontCallTrue')][0]" < "$out/cli.json")"
  record daemon_rss_mib "$(json_field "[b['rss_MiB'] for b in d['benchmarks'] if b['name'].startswith('BM_DaemonMemory')][0]" < "$out/cli.json")"
done
echo "compare.sh: ended $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$out/figures" "$rounds" << 'PY'
import collections, statistics, sys
figures = collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, value = line.split()
    if value not in ("", "None"):
        figures[name].append(float(value))
med = {k: statistics.median(v) for k, v in figures.items()}
rows = []

def row(measure, ours, anchor, goal):
    """goal: ("<=", bound) or (">=", bound) on ours / anchor; None for a
    reference row with no goal."""
    a, b = med.get(ours), med.get(anchor)
    goal_text = f"{goal[0]} {goal[1]}" if goal else "-"
    if a is None or b is None or b == 0:
        rows.append((measure, a, b, None, goal_text, "n/a"))
        return
    ratio = a / b
    if not goal:
        rows.append((measure, a, b, ratio, goal_text, "reference"))
        return
    op, bound = goal
    met = ratio <= bound if op == "<=" else ratio >= bound
    rows.append((measure, a, b, ratio, goal_text, "met" if met else "MISSED"))

row("in-process fresh context, CPU per run (us) / bare V8 floor", "corral_inproc_cpu_us",
    "floor_cpu_us", ("<=", 0.8))
row("in-process fresh context, CPU per run (us) / isolated-vm", "corral_inproc_cpu_us",
    "ivm_inproc_cpu_us", ("<=", 1.0))
row("in-process fresh context, runs/s / isolated-vm", "corral_inproc_rate", "ivm_inproc_rate",
    (">=", 1.0))
for w in ("trivial", "json", "console", "compute"):
    for c in (1, 4):
        goal = (">=", 1.0) if w == "compute" else (">=", 2.5)
        conns = "1 conn" if c == 1 else f"{c} conns"
        row(f"server {w}, {conns}, runs/s / ws + isolated-vm", f"corral_{w}_{c}_rate",
            f"baseline_{w}_{c}_rate", goal)
        if w != "compute":
            row(f"server {w}, {conns}, p50 (us) / ws + isolated-vm", f"corral_{w}_{c}_p50_us",
                f"baseline_{w}_{c}_p50_us", ("<=", 0.4))
if "corral_tools_1_p50_us" in med and "corral_trivial_1_p50_us" in med:
    med["corral_tool_call_us"] = (med["corral_tools_1_p50_us"] - med["corral_trivial_1_p50_us"]) / 10
    med["fifty_us"] = 50.0
    row("tool call over the bridge, added us per call at 1 conn / 50 us", "corral_tool_call_us",
        "fifty_us", ("<=", 1.0))
if "handoff_us" in med:
    # The bridge's path crosses seven thread hand-offs (bench/pool_bench.cc
    # BM_ThreadHandOff): what they alone cost on this machine.
    med["seven_handoffs_us"] = 7 * med["handoff_us"]
    row("tool call over the bridge (us) / seven thread hand-offs on this machine",
        "corral_tool_call_us", "seven_handoffs_us", None)
row("server tools, 4 conns / 1 conn (runs/s)", "corral_tools_4_rate", "corral_tools_1_rate",
    (">=", 3.0))
row("default retirement / none, trivial 4 conns, runs/s", "retire_default_rate",
    "retire_none_rate", (">=", 0.95))
row("retirement every ~1000 runs (the old default) / none", "retire_1000_rate",
    "retire_none_rate", None)
row("compute 4 conns, 2 workers / 1 worker (runs/s)", "compute_2w_rate", "compute_1w_rate",
    (">=", 1.8))
med["thirty_mib"] = 30.0
row("idle worker RSS (MiB) / 30 MiB", "idle_worker_rss_mib", "thirty_mib", ("<=", 1.0))
med["twenty_mib"] = 20.0
row("daemon RSS after a run, workers apart (MiB) / 20 MiB", "daemon_rss_mib", "twenty_mib",
    ("<=", 1.0))
row("`corral call /bin/true` / posix_spawn + wait of /bin/true (us)", "call_true_us",
    "spawn_true_us", ("<=", 2.0))

print(f"medians over {sys.argv[2]} rounds\n")
print("| measure | corral | anchor | ratio | goal | |")
print("|---|---|---|---|---|---|")
fmt = lambda x: "n/a" if x is None else (f"{x:.0f}" if abs(x) >= 100 else f"{x:.2f}")
for measure, a, b, ratio, goal, met in rows:
    r = "n/a" if ratio is None else f"{ratio:.2f}x"
    print(f"| {measure} | {fmt(a)} | {fmt(b)} | {r} | {goal} | {met} |")
PY
