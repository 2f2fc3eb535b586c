#!/usr/bin/env bash
# Benchmark of `compare` on two trace runs (docs/compare.md#speed,
# docs/benchmarks.md#compare): comparing two inputs must cost no more than
# reading both with the single-run tool. Prints, in the same run: the floor (`cat` of both runs),
# `tracestat` on each run (and their sum), and `compare BASE CAND`, with
# wall seconds, MB/s, CPU seconds and peak RSS, and the ratio of compare to
# the two tracestat runs.
#
#   benches/compare.sh [--gen UNITRACE_GEN] [--ranks N] [--size SIZE]
#                      [--work DIR] [--repeat R]
#
# Default: 4 ranks x 250MB per run (1 GB per side), seeds 1 and 2.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
ranks=4
size=250MB
repeat=2
work=""
while [ $# -gt 0 ]; do
    case "$1" in
        --gen) UNITRACE_GEN="$2"; shift 2 ;;
        --ranks) ranks="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/compare-bench.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
(cd "$repo" && cargo build --release --locked -p tracestat -p compare >&2)
tracestat="$CARGO_TARGET_DIR/release/tracestat"
compare="$CARGO_TARGET_DIR/release/compare"

for seed in 1 2; do
    d="$work/run$seed-$ranks-$size"
    if [ ! -d "$d" ]; then
        echo "generating $ranks traces of $size in $d" >&2
        unitrace_gen --seed "$seed" trace "$d.tmp" --ranks "$ranks" --size "$size" -q
        mv "$d.tmp" "$d"
    fi
done
base="$work/run1-$ranks-$size"
cand="$work/run2-$ranks-$size"
base_bytes=$(cat "$base"/*.json | wc -c)
cand_bytes=$(cat "$cand"/*.json | wc -c)
bytes=$((base_bytes + cand_bytes))
sync
cat "$base"/*.json "$cand"/*.json > /dev/null   # warm the page cache alike

# run LABEL CMD... : fastest of $repeat runs: wall s, MB/s (of $cur bytes read),
# CPU s, peak RSS; leaves the wall seconds in $work/last_secs.
run() {
    local label="$1"; shift
    local t="$work/time.txt" best="" i
    for ((i = 0; i < repeat; i++)); do
        /usr/bin/time -f "%e %U %S %M" -o "$t" "$@" > /dev/null
        if [ -z "$best" ] || awk -v a="$(cut -d' ' -f1 "$t")" -v b="$(cut -d' ' -f1 <<< "$best")" 'BEGIN { exit !(a < b) }'; then
            best="$(cat "$t")"
        fi
    done
    read -r secs user sys rss_kb <<< "$best"
    awk -v l="$label" -v s="$secs" -v u="$user" -v y="$sys" -v b="$cur" -v r="$rss_kb" \
        'BEGIN { printf "%-36s %7.2f s %7.1f MB/s | cpu %7.2f s | %7.1f MB peak RSS\n", l, s, b / 1e6 / (s > 0 ? s : 0.01), u + y, r / 1024 }'
    echo "$secs" > "$work/last_secs"
}

echo "input: 2 runs x $ranks files, $((bytes / 1000000)) MB in all ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); best of $repeat)"
cur=$bytes
run "floor: cat both runs" cat "$base"/*.json "$cand"/*.json
# tracestat takes files, not a directory
cur=$base_bytes
run "tracestat BASE" "$tracestat" -q "$base"/*.json
read -r t1 < "$work/last_secs"
cur=$cand_bytes
run "tracestat CAND" "$tracestat" -q "$cand"/*.json
read -r t2 < "$work/last_secs"
cur=$bytes
run "compare BASE CAND (all outputs)" "$compare" "$base" "$cand" --csv "$work/c.csv" --json "$work/c.json" --markdown "$work/c.md"
read -r tc < "$work/last_secs"
awk -v a="$t1" -v b="$t2" -v c="$tc" 'BEGIN { printf "compare / (tracestat BASE + tracestat CAND) = %.2f\n", c / (a + b) }'
