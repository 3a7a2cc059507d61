#!/usr/bin/env bash
# bench/ab.sh: two builds of corral side by side, alternating, on one machine.
#
#   bench/ab.sh BUILD_A BUILD_B [ROUNDS]
#
# BUILD_A and BUILD_B are build trees with the benchmarks built (for an old
# commit: `git worktree add /tmp/base COMMIT`, configure it Release with
# -DCORRAL_LIBNODE_ROOT=$PWD/build/third_party/libnode, build server_bench
# pool_bench sandbox_bench corral corral-engine; link ../shared beside the
# worktree so the standard workloads are found). Each round runs every
# executor-server workload on 1 and 4 connections for 1 s, A then B, and
# prints the medians over the rounds and B's ratio to A. Run it on a quiet
# machine: check that nothing else of yours is running (pgrep -a bench).
# WORKLOADS="trivial json" narrows the series to some workloads.
set -euo pipefail
a="${1:?build tree A}"
b="${2:?build tree B}"
rounds="${3:-6}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
echo "start $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((i = 1; i <= rounds; i++)); do
  for side in A B; do
    if [[ $side == A ]]; then dir="$a"; else dir="$b"; fi
    for w in ${WORKLOADS:-trivial json tools console}; do
      "$dir/bench/server_bench" --workers 2 --seconds 1 --many 4 --only "$w" 2>&1 |
        awk -v s="$side" -v w="$w" '$1 == w { print s, $1 "/" $2, $3, $4 }' >> "$out"
    done
  done
done
echo "end $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$out" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    side, name, rate, p50 = line.split()
    runs[name][side].append((float(rate), float(p50)))
print(f"{'workload':12} {'A exec/s':>9} {'A p50 us':>9} {'B exec/s':>9} {'B p50 us':>9} {'B/A rate':>9} {'B/A p50':>8}")
for name, sides in runs.items():
    ra = statistics.median(r for r, _ in sides['A']); pa = statistics.median(p for _, p in sides['A'])
    rb = statistics.median(r for r, _ in sides['B']); pb = statistics.median(p for _, p in sides['B'])
    print(f"{name:12} {ra:9.0f} {pa:9.0f} {rb:9.0f} {pb:9.0f} {rb / ra:9.2f} {pb / pa:8.2f}")
PY
