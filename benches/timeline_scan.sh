#!/usr/bin/env bash
# Reader-only benchmark of the trace source `core::timeline`
# (docs/benchmarks.md#the-pftrace-reader): the same generated events as
# JSON and as .pftrace, and optionally Kineto traces, each read through
# `core::timeline` into a sink that only counts (`core/examples/timeline_scan.rs`),
# beside the floor (the same bytes read() into 1 MiB and dropped); for
# .pftrace also the protobuf decoder alone.
#
#   benches/timeline_scan.sh [--gen UNITRACE_GEN] [--size SIZE] [--work DIR]
#                            [--repeat R] [--one-core] [--kineto DIR]
#                            [--baseline TIMELINE_SCAN]
#
# Default input: `unitrace-gen --seed 0 trace --ranks 1 --size 500MB
# --format both` (docs/unitrace-gen.md). --kineto DIR adds the Kineto
# traces (*.json) of DIR, e.g. those benches/kineto.sh replicates.
# --baseline runs another build of the example (e.g. main's) on the same
# files in the same run. --one-core pins the runs to CPU 0. The best of R
# rounds (default 3) is kept; on a shared machine the CPU figures (MB per
# CPU second) are the steadier ones, and `uptime` is printed beside them.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
size=500MB
repeat=3
work=""
pin=()
kineto=""
baseline=""
while [ $# -gt 0 ]; do
    case "$1" in
        --gen) UNITRACE_GEN="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --one-core) pin=(taskset -c 0); shift ;;
        --kineto) kineto="$2"; shift 2 ;;
        --baseline) baseline="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/timeline-scan-bench.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
(cd "$repo" && cargo build --release --locked -p unitrace-core --example timeline_scan >&2)
bin="$CARGO_TARGET_DIR/release/examples/timeline_scan"

in="$work/in-1-$size-both"
if [ ! -d "$in" ]; then
    echo "generating one trace of $size as JSON and .pftrace in $in" >&2
    unitrace_gen --seed 0 trace "$in.tmp" --ranks 1 --size "$size" --format both -q
    mv "$in.tmp" "$in"
fi

echo "uptime: $(uptime)"
sets=("$in"/*.json "$in"/*.pftrace)
if [ -n "$kineto" ]; then
    sets+=("$(ls "$kineto"/*.json | tr '\n' ' ')")
fi
for set in "${sets[@]}"; do
    read -r -a files <<< "$set"
    cat "${files[@]}" > /dev/null   # warm the page cache
    echo "== ${files[*]##*/}"
    "${pin[@]}" "$bin" --repeat "$repeat" "${files[@]}"
    if [ -n "$baseline" ]; then
        echo "-- baseline $baseline:"
        "${pin[@]}" "$baseline" --repeat "$repeat" "${files[@]}" | grep -v '^floor\|^input'
    fi
done
echo "uptime: $(uptime)"
