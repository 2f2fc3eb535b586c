#!/usr/bin/env bash
# Scanner-only benchmark of the JSON trace reader `core::trace`
# (docs/benchmarks.md#the-json-trace-scanner): every stage-1 kernel this CPU
# has (and the byte parser alone) reads the same generated trace, validating
# it and yielding its events; prints wall and CPU MB/s per kernel beside the
# floor (the same bytes read() and dropped) and `cat` of the file.
#
#   benches/trace_scan.sh [--gen UNITRACE_GEN] [--ranks N] [--size SIZE]
#                         [--work DIR] [--repeat R] [--one-core]
#
# Default input: `unitrace-gen --seed 1 trace --ranks 1 --size 500MB` (one
# 500 MB rank, the file size of the 8 x 500 MB runs of benches/tracestat.sh
# and benches/mergetrace.sh; docs/unitrace-gen.md, the workspace's generator
# or $UNITRACE_GEN / --gen). --one-core pins
# the run to CPU 0 with taskset. The best of R rounds (default 3) is kept;
# on a shared machine the CPU figures (MB per CPU second) are the steadier
# ones, and `uptime` is printed beside them.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
ranks=1
size=500MB
repeat=3
work=""
pin=()
while [ $# -gt 0 ]; do
    case "$1" in
        --gen) UNITRACE_GEN="$2"; shift 2 ;;
        --ranks) ranks="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --one-core) pin=(taskset -c 0); shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/trace-scan-bench.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
(cd "$repo" && cargo build --release --locked -p unitrace-core --example trace_scan >&2)
bin="$CARGO_TARGET_DIR/release/examples/trace_scan"

in="$work/in-$ranks-$size"
if [ ! -d "$in" ]; then
    echo "generating $ranks traces of $size in $in" >&2
    unitrace_gen --seed 1 trace "$in.tmp" --ranks "$ranks" --size "$size" -q
    mv "$in.tmp" "$in"
fi
mapfile -t files < <(ls "$in"/*.json | sort -t. -k3,3n)
sync
cat "${files[@]}" > /dev/null   # warm the page cache for every run alike

echo "uptime: $(uptime)"
/usr/bin/time -f "cat > /dev/null: %e s wall, %U+%S s CPU" cat "${files[@]}" > /dev/null
"${pin[@]}" "$bin" --repeat "$repeat" "${files[@]}"
