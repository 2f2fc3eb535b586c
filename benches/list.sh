#!/usr/bin/env bash
# Benchmark of `analyze -l` (docs/benchmarks.md#list): throughput and peak RSS on a large
# generated metric CSV and, when the original analyzeperfmetrics.py is
# given, the ratio of its wall time to ours on the same (smaller) file,
# measured in this run.
#
# usage: benches/list.sh [--gen UNITRACE_GEN] [--original analyzeperfmetrics.py]
#                        [--python PYTHON] [--size 1GB] [--ratio-size 100MB]
#                        [--dir DIR] [--keep]
# Defaults: the workspace's unitrace-gen (built; docs/unitrace-gen.md),
# PYTHON=python3, DIR=benches/out. Environment variables UNITRACE_GEN,
# ORIGINAL, PYTHON, SIZE, RATIO_SIZE, BENCH_DIR give the same settings.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
ORIGINAL="${ORIGINAL:-}"
PYTHON="${PYTHON:-python3}"
SIZE="${SIZE:-1GB}"
RATIO_SIZE="${RATIO_SIZE:-100MB}"
DIR="${BENCH_DIR:-$repo/benches/out}"
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --gen) UNITRACE_GEN=$2; shift 2 ;;
        --original) ORIGINAL=$2; shift 2 ;;
        --python) PYTHON=$2; shift 2 ;;
        --size) SIZE=$2; shift 2 ;;
        --ratio-size) RATIO_SIZE=$2; shift 2 ;;
        --dir) DIR=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) echo "list.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -x /usr/bin/time ] || { echo "list.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 1; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
(cd "$repo" && cargo build --release --locked -p analyze >&2)
bin="$CARGO_TARGET_DIR/release/analyze"
mkdir -p "$DIR"

# gen_file NAME SIZE: generated once per size and reused by later runs.
gen_file() {
    local f="$DIR/$1"
    if [ ! -s "$f" ]; then
        echo "generating $f ($2) ..." >&2
        unitrace_gen --seed 5 metrics "$f" --size "$2" --devices 2 --quiet
    fi
    echo "$f"
}

# run_timed CMD...: runs CMD with stdout to /dev/null; prints
# "<wall seconds> <peak RSS KiB> <CPU seconds (user+sys)>". CPU time is
# reported too because on a shared machine wall time includes waiting.
run_timed() {
    local t start end
    t=$(mktemp)
    # Wall time from the clock in ns (GNU time's %e has 10 ms steps, too
    # coarse for sub-second runs); peak RSS from GNU time.
    start=$(date +%s%N)
    /usr/bin/time -f "%M %U %S" -o "$t" "$@" > /dev/null
    end=$(date +%s%N)
    awk -v a="$start" -v b="$end" '{ printf "%.3f %s %.2f\n", (b - a) / 1e9, $1, $2 + $3 }' "$t"
    rm -f "$t"
}

# best_of N CMD...: best wall time (and the RSS of that run) of N runs.
best_of() {
    local n=$1; shift
    local best="" line
    for _ in $(seq "$n"); do
        line=$(run_timed "$@")
        if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
            best=$line
        fi
    done
    echo "$best"
}

big=$(gen_file "metrics-$SIZE.csv" "$SIZE")
bytes=$(stat -c %s "$big")
cat "$big" > /dev/null   # into the page cache: we measure parsing, not the disk
read -r wall rss cpu < <(best_of 3 "$bin" -l "$big")
mbps=$(awk -v b="$bytes" -v t="$wall" 'BEGIN { printf "%.0f", (t > 0 ? b / 1e6 / t : 0) }')
cpu_mbps=$(awk -v b="$bytes" -v t="$cpu" 'BEGIN { printf "%.0f", (t > 0 ? b / 1e6 / t : 0) }')
echo "analyze -l on $(basename "$big"): $bytes bytes, best of 3: ${wall} s wall = ${mbps} MB/s (${cpu} s CPU = ${cpu_mbps} MB/s), peak RSS $((rss / 1024)) MiB"

if [ -n "$ORIGINAL" ]; then
    small=$(gen_file "metrics-$RATIO_SIZE.csv" "$RATIO_SIZE")
    sbytes=$(stat -c %s "$small")
    cat "$small" > /dev/null
    # Same output from both on this file (the ratio compares equal work).
    "$PYTHON" "$ORIGINAL" -l "$small" > "$DIR/original.list.txt"
    "$bin" -l "$small" > "$DIR/ours.list.txt"
    if cmp -s "$DIR/original.list.txt" "$DIR/ours.list.txt"; then same="identical output"; else same="OUTPUT DIFFERS"; fi
    read -r owall orss ocpu < <(run_timed "$PYTHON" "$ORIGINAL" -l "$small")
    read -r swall srss scpu < <(best_of 3 "$bin" -l "$small")
    ratio=$(awk -v a="$owall" -v b="$swall" 'BEGIN { printf "%.0f", (b > 0 ? a / b : 0) }')
    echo "on $(basename "$small") ($sbytes bytes, $same): original ${owall} s wall (${ocpu} s CPU), peak RSS $((orss / 1024)) MiB; analyze ${swall} s wall (${scpu} s CPU), peak RSS $((srss / 1024)) MiB; wall-time ratio ${ratio}x"
fi

if [ "$KEEP" = 0 ]; then
    rm -f "$DIR"/metrics-*.csv "$DIR"/original.list.txt "$DIR"/ours.list.txt
fi
