#!/usr/bin/env bash
# Benchmark of `summary` on a synthetic multi-rank tarball.
#
#   benches/summary.sh [GEN] [ORIG_SUMMARY_PY]
#
# GEN: the unitrace-gen binary (default $UNITRACE_GEN, else the workspace's,
# built; docs/unitrace-gen.md). ORIG_SUMMARY_PY: the original summary.py (or $ORIG);
# when given, it runs on the same file with $PYTHON (default python3) and the
# speed ratio is printed. RANKS (default 1024) and SIZE (default 1GB) set the
# input; the tarball is cached under $BENCH_DIR (default
# $CARGO_TARGET_DIR/bench or target/bench).
#
# Prints for each tool: wall seconds, CPU seconds, uncompressed MB/s and peak
# RSS (from /usr/bin/time), then ours / gzip -dc and summary.py / ours.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
UNITRACE_GEN=${1:-${UNITRACE_GEN:-}}
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
ORIG=${2:-${ORIG:-}}
PYTHON=${PYTHON:-python3}
RANKS=${RANKS:-1024}
SIZE=${SIZE:-1GB}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
BENCH_DIR=${BENCH_DIR:-$CARGO_TARGET_DIR/bench}
mkdir -p "$BENCH_DIR"

(cd "$repo" && cargo build --release --locked -p summary --bin summary >&2)
bin=$CARGO_TARGET_DIR/release/summary
schema=$repo/schemas/LLaMA.json
tgz=$BENCH_DIR/summaries_${RANKS}r_${SIZE}.tgz
if [ ! -s "$tgz" ]; then
    echo "generating $tgz ..." >&2
    unitrace_gen summaries --ranks "$RANKS" --size "$SIZE" "$tgz.tmp" >&2
    mv "$tgz.tmp" "$tgz"
fi
raw_bytes=$(gzip -dc "$tgz" | wc -c)
mb=$(awk -v b="$raw_bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
echo "input: $tgz ($(du -h "$tgz" | cut -f1) gzipped, $mb MB of tar)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# measure NAME CMD...: runs once under /usr/bin/time, prints one line and
# leaves wall seconds in $tmp/NAME.wall.
measure() {
    local name=$1; shift
    /usr/bin/time -o "$tmp/$name.time" -f "%e %U %S %M" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" || {
        echo "$name failed:"; cat "$tmp/$name.err"; return 1; }
    read -r wall user sys rss < "$tmp/$name.time"
    echo "$wall" > "$tmp/$name.wall"
    awk -v n="$name" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v b="$raw_bytes" 'BEGIN {
        printf "%-12s %7.2f s wall  %7.2f s cpu  %8.1f MB/s  peak RSS %6.1f MB\n",
               n, w, u + s, (w > 0 ? b / 1e6 / w : 0), r / 1024 }'
}

measure "gzip -dc" sh -c "gzip -dc '$tgz' > /dev/null"
measure summary "$bin" --input "$tgz" --schema "$schema"
measure "summary -j1" "$bin" --input "$tgz" --schema "$schema" --jobs 1 --aggregator median
ours=$(cat "$tmp/summary.wall")
gz=$(cat "$tmp/gzip -dc.wall")
awk -v o="$ours" -v g="$gz" 'BEGIN { printf "summary / gzip -dc: %.2fx (target <= 1.5x)\n", o / g }'
if [ -n "$ORIG" ]; then
    measure summary.py "$PYTHON" "$ORIG" --input "$tgz" --schema "$schema"
    py=$(cat "$tmp/summary.py.wall")
    awk -v o="$ours" -v p="$py" 'BEGIN { printf "summary.py / summary: %.1fx faster (target >= 10x)\n", p / o }'
    # Same keys; values differ only where the tarball has a kernel on two
    # rows of one file (docs/compatibility.md#summary-4, summed per file by us).
    python3 - "$tmp/summary.out" "$tmp/summary.py.out" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print("same keys as summary.py:", list(a) == list(b))
PY
fi
