#!/usr/bin/env bash
# Builds and runs bare_v8_context.cc against the V8 corral uses (Debian's
# libnode108: build/third_party/libnode if scripts/setup unpacked it there,
# else the system package). Never the other vendor's /usr/include/node.
#
#   bench/peers/bare_v8_context.sh [iterations] [extra V8 flags...]
#   e.g. bench/peers/bare_v8_context.sh 5000 --no-validate-asm
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="${CORRAL_LIBNODE_ROOT:-$here/../../build/third_party/libnode}"
if [[ -f "$root/usr/include/node/v8.h" ]]; then
  include="$root/usr/include/node"
  libdir="$root/usr/lib/x86_64-linux-gnu"
elif [[ -f /usr/lib/x86_64-linux-gnu/libnode.so.108 ]]; then
  include=/usr/include/node
  libdir=/usr/lib/x86_64-linux-gnu
else
  echo "bare_v8_context.sh: libnode108 not found (run scripts/setup)" >&2
  exit 1
fi
out="${TMPDIR:-/tmp}/corral_bare_v8_context"
g++ -std=c++20 -O2 -isystem "$include" "$here/bare_v8_context.cc" -o "$out" \
  "$libdir/libnode.so.108" -Wl,-rpath,"$libdir" -lpthread
exec "$out" "$@"
