#!/usr/bin/env bash
# deploy/test-image.sh [BUILD_DIR]: build corral's image from deploy/Dockerfile
# and run it the way deploy/kubernetes runs it, then check it from outside.
#
#   1. A Debian 12 base (debootstrap minbase, imported with `podman import`;
#      kept in podman's storage, so later runs skip it). No registry is
#      reachable here, so the Dockerfile's BASE_IMAGE is this one.
#   2. The image, with BINARIES made from BUILD_DIR's Release binaries
#      (default build/release, what the README's first command builds), so
#      corral is not compiled a second time.
#   3. The container as the pod runs it: read-only root and nothing
#      writable, uid 10001, every capability dropped, no-new-privileges,
#      podman's default seccomp profile, a memory limit, the deployment's
#      settings and a token.
#   4. Checks: a container without a token refuses to start; /readyz;
#      `corral check` inside; executes from the host with `corral exec`
#      (JavaScript, TypeScript, Ruby), refused without the token; two
#      workers killed, replaced, and no zombie left; SIGTERM with a run in
#      flight: the run finishes, the container exits 0.
#
# Needs root (rootful podman). Installs podman, runc and debootstrap when
# missing. On machines without CAP_SYS_RESOURCE (these), podman's default
# rlimits (nofile 1048576) cannot be set and crun refuses hybrid cgroups:
# the script runs podman with its own containers.conf (runc, cgroupfs, the
# current hard limits). docs/operations.md says more.
set -euo pipefail
# Every step below is bounded (timeout, curl --max-time); the whole script
# is bounded by its caller too (.ci/run).

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build="$(cd "${1:-build/release}" && pwd)"
start=$SECONDS
work="${CORRAL_IMAGE_WORK:-/var/tmp/corral-image}"
base_image="localhost/corral-base:bookworm"
image="localhost/corral:test"
name="corral-test-$$"
mkdir -p "$work"

say() { echo "== test-image: $* ($((SECONDS - start)) s)"; }
fail() {
  echo "test-image: FAIL: $*" >&2
  if podman container exists "$name" 2>/dev/null; then
    echo "---- the container's log:" >&2
    podman logs --tail 40 "$name" >&2 || true
  fi
  exit 1
}

# ---- podman ------------------------------------------------------------------
missing=()
for p in podman runc debootstrap curl; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# runc rather than crun (crun 1.8 refuses cgroups in hybrid mode), cgroupfs
# (no systemd), and rlimits no higher than this process's hard limits
# (podman itself caps nproc at 32768): setting a higher one needs
# CAP_SYS_RESOURCE, which these machines do not give.
nofile="$(ulimit -Hn)"
nproc="$(ulimit -Hu)"
[ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
[ "$nofile" = unlimited ] && nofile=1048576
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
EOF
export CONTAINERS_CONF="$work/containers.conf"

# ---- the base ----------------------------------------------------------------
if ! podman image exists "$base_image"; then
  say "building the Debian 12 base with debootstrap"
  rootfs="$work/rootfs"
  rm -rf "$rootfs"
  mirror="$({ sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources ||
    true; } 2>/dev/null | sed -n 1p)"
  timeout 900 debootstrap --variant=minbase bookworm "$rootfs" "${mirror:-http://deb.debian.org/debian}" \
    >"$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log" >&2; fail "debootstrap"; }
  # The host's apt sources (the mirror it reaches, security updates
  # included), and no package lists baked into the base.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
  mkdir -p "$rootfs/var/lib/apt/lists/partial"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    rm -f "$rootfs/etc/apt/sources.list"
    cp /etc/apt/sources.list.d/debian.sources "$rootfs/etc/apt/sources.list.d/"
  elif [ -f /etc/apt/sources.list ]; then
    cp /etc/apt/sources.list "$rootfs/etc/apt/sources.list"
  fi
  tar -C "$rootfs" -c . | podman import - "$base_image" >/dev/null
  rm -rf "$rootfs"
fi

# ---- the image ---------------------------------------------------------------
say "building the image from deploy/Dockerfile with $build's binaries"
staging="$work/binaries.$$"
rm -rf "$staging"
install -D -s "$build/apps/corral/corral" "$staging/out/usr/local/bin/corral"
install -D -s "$build/apps/corral/corral-engine" "$staging/out/usr/local/libexec/corral/corral-engine"
install -D -s "$build/src/sandbox/ruby/corral-ruby-helper" \
  "$staging/out/usr/local/libexec/corral/corral-ruby-helper"
printf 'FROM scratch\nCOPY out/ /out/\n' >"$staging/Containerfile"
podman build --pull=never -q -t localhost/corral-binaries:test "$staging" >/dev/null
podman build --pull=never -q -f deploy/Dockerfile \
  --build-arg BASE_IMAGE="$base_image" --build-arg BINARIES=localhost/corral-binaries:test \
  -t "$image" . >/dev/null
say "image built: $(podman image inspect -f '{{.Size}}' "$image" | numfmt --to=iec) bytes"

# ---- running it as the pod does ----------------------------------------------
# The deployment's settings (deploy/kubernetes) and its securityContext.
# Nothing is writable: corral writes no file of its own (a bound command's
# /tmp is a tmpfs in the command's own mount namespace).
hardened=(--read-only --read-only-tmpfs=false
  --user 10001:10001 --cap-drop=ALL --security-opt no-new-privileges --memory 1g
  -e CORRAL_MAX_WORKERS=2 -e CORRAL_EXECUTIONS_PER_WORKER=1 -e CORRAL_MEMORY_LIMIT=64MiB
  -e CORRAL_TIMEOUT=30s -e CORRAL_SHUTDOWN_DELAY=5s -e CORRAL_SHUTDOWN_GRACE=30s)

say "without a token the container refuses to start"
set +e
refusal="$(timeout 60 podman run --rm --name "$name-refused" "${hardened[@]}" "$image" 2>&1)"
status=$?
set -e
[ "$status" -ne 0 ] || fail "a container without a token started (exit 0)"
grep -q "reachable beyond loopback" <<<"$refusal" || fail "no reason given: $refusal"

token="$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
cleanup() {
  # One at a time: podman removes none of several names when one is missing.
  for c in "$name" "$name-refused"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  rm -rf "$staging"
}
trap cleanup EXIT
podman run -d --name "$name" "${hardened[@]}" -e CORRAL_AUTH_TOKEN="$token" \
  -p 127.0.0.1::8080 "$image" >/dev/null
port="$(podman port "$name" 8080/tcp | sed 's/.*://')"
url="http://127.0.0.1:${port}"

say "waiting for /readyz on port $port"
for _ in $(seq 1 300); do
  curl -fsS --max-time 5 "$url/readyz" >/dev/null 2>&1 && break
  [ "$(podman inspect -f '{{.State.Running}}' "$name")" = true ] || fail "the container exited"
  sleep 0.2
done
curl -fsS --max-time 5 "$url/readyz" >/dev/null || fail "/readyz never answered 200"

say "corral check inside"
timeout 60 podman exec "$name" corral check || fail "corral check failed inside the container"
status="$(timeout 30 podman exec "$name" sh -c 'grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/1/status')"
echo "$status"
grep -q "^CapEff:[[:space:]]*0*$" <<<"$status" || fail "PID 1 holds capabilities"
grep -q "^NoNewPrivs:[[:space:]]*1$" <<<"$status" || fail "PID 1 may gain privileges"
grep -q "^Seccomp:[[:space:]]*2$" <<<"$status" || fail "PID 1 runs without a seccomp filter"

corral="$build/apps/corral/corral"
exec_in() {  # exec_in TOKEN LANGUAGE: `corral exec` of stdin from the host
  timeout 120 "$corral" exec --server "ws://127.0.0.1:${port}" ${1:+--token "$1"} \
    --language "$2" --echo -
}
run() {  # run LANGUAGE CODE EXPECTED: an execute that must answer EXPECTED
  local out
  out="$(printf '%s' "$2" | exec_in "$token" "$1" 2>&1)" || fail "$1 run failed: $out"
  [ "$out" = "$3" ] || fail "$1 run answered '$out', not '$3'"
}
say "executes from outside"
run javascript 'const r = await codemode.echo({n: 41}); return r.n + 1' 42
run typescript 'const n: number = 40; return (n as number) + 2' 42
run ruby '6 * 7' 42
set +e
refused="$(printf '1' | exec_in "" javascript 2>&1)"
status=$?
set -e
[ "$status" = 1 ] && grep -q "connection_rejected" <<<"$refused" ||
  fail "a run without the token was not refused: $refused"

# Two workers killed (SIGKILL to the pid the pool knows, as a hung-worker
# kill is): the pool replaces them and nothing is left as a zombie.
say "killing two workers, then counting zombies"
worker_pids() {
  timeout 30 podman exec "$name" sh -c 'for d in /proc/[0-9]*; do
    cmd="$(tr "\0" " " <"$d/cmdline" 2>/dev/null)"
    case "$cmd" in *corral-engine\ worker*) echo "${d#/proc/}";; esac; done'
}
for _ in 1 2; do
  victim="$(worker_pids | sed -n 1p)"
  [ -n "$victim" ] || fail "no worker process found"
  timeout 30 podman exec "$name" sh -c "kill -KILL $victim" || fail "could not kill worker $victim"
  run javascript 'return 1 + 1' 2
done
zombies() {
  timeout 30 podman exec "$name" sh -c 'n=0; for d in /proc/[0-9]*; do
    s="$(cut -d" " -f3 "$d/stat" 2>/dev/null)"; [ "$s" = Z ] && n=$((n + 1)); done; echo $n'
}
# A zombie lives until its parent's next wait; allow corral's 500 ms sweep
# two rounds.
for _ in $(seq 1 30); do [ "$(zombies)" = 0 ] && break; sleep 0.1; done
[ "$(zombies)" = 0 ] || fail "$(zombies) zombie processes after two worker kills"

say "SIGTERM with a run in flight"
# About 7 s of work (a guest's clock is frozen: it cannot wait on it):
# longer than the shutdown delay (5 s), so it is still running when the
# drain begins, and well inside the drain (30 s - 5 s - 2 s).
inflight_out="$staging/inflight.out"
printf 'let x = 0; for (let i = 0; i < 6e9; i++) x += i & 1; return x > 0 ? "drained" : "?"' |
  exec_in "$token" javascript >"$inflight_out" 2>&1 &
inflight=$!
# The run has started once the daemon counts it.
running() { curl -fsS --max-time 5 "$url/metrics" | grep -c '^corral_executions_running 1$' || true; }
for _ in $(seq 1 100); do
  [ "$(running)" = 1 ] && break
  sleep 0.05
done
[ "$(running)" = 1 ] || fail "the long run was not running before SIGTERM"
stop_start=$SECONDS
timeout 60 podman stop -t 45 "$name" >/dev/null
wait "$inflight" || fail "the run in flight failed: $(cat "$inflight_out")"
[ "$(cat "$inflight_out")" = '"drained"' ] || fail "the run in flight answered $(cat "$inflight_out")"
podman logs "$name" 2>&1 | grep -q "stopping: draining executions" ||
  fail "the daemon never said it was draining"
exit_code="$(podman inspect -f '{{.State.ExitCode}}' "$name")"
[ "$exit_code" = 0 ] || fail "the container exited $exit_code after SIGTERM"
say "stopped in $((SECONDS - stop_start)) s, exit 0"
say "passed"
