#!/usr/bin/env bash
# Benchmark of the input generator `unitrace-gen` (docs/unitrace-gen.md):
# how fast it writes traces, against `cat` of the files it wrote into a file
# on the same disk (the floor: the same bytes written once more).
#
#   benches/gen.sh [--ranks N] [--size SIZE] [--small-ranks M] [--work DIR] [--repeat R]
#
# Three runs, each timed with /usr/bin/time (wall, CPU, peak RSS), the best
# of R (default 2) kept:
#   1. `trace --ranks N --size SIZE` (default 4 x 250MB, 1 GB of JSON);
#   2. the same with `--format pftrace`;
#   3. `trace --ranks M --events 40 --layout result-dir` (default 4096
#      small ranks: the cost per file).
# For each: MB/s of output (wall and per CPU second) and the ratio to `cat`.
# `uptime` is printed first: the machine may be shared.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
. "$repo/scripts/unitrace_gen.sh"
ranks=4
size=250MB
small=4096
repeat=2
work=""
while [ $# -gt 0 ]; do
    case "$1" in
        --ranks) ranks="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --small-ranks) small="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/gen-bench.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
unitrace_gen --version >/dev/null   # builds it once, outside the timings; sets $UNITRACE_GEN

# timed LABEL OUTDIR COMMAND...: best wall of R runs into OUTDIR (removed
# before each run); prints the line and leaves "wall cpu bytes" in $work/LABEL.
timed() {
    local label=$1 out=$2; shift 2
    local best="" cpu="" rss=""
    for _ in $(seq "$repeat"); do
        rm -rf "$out"
        sync
        /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null
        read -r w u s m < "$work/time"
        if [ -z "$best" ] || awk -v a="$w" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$w; cpu=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }'); rss=$m
        fi
    done
    local bytes files
    bytes=$(du -sb "$out" | cut -f1)
    files=$(find "$out" -type f | wc -l)
    awk -v l="$label" -v w="$best" -v c="$cpu" -v b="$bytes" -v f="$files" -v r="$rss" 'BEGIN {
        printf "%-34s %6d files %9.1f MB  %7.2f s wall %8.1f MB/s  %7.2f s CPU %8.1f MB/CPU-s  peak RSS %.1f MB\n",
            l, f, b / 1e6, w, (w > 0 ? b / 1e6 / w : 0), c, (c > 0 ? b / 1e6 / c : 0), r / 1024 }'
    echo "$best $cpu $bytes" > "$work/$label.result"
}

# floor LABEL OUTDIR: `cat` of the files written, into one file on the same disk.
floor() {
    local label=$1 out=$2
    sync
    find "$out" -type f -print0 | sort -z | xargs -0 cat > /dev/null   # warm
    /usr/bin/time -f "%e" -o "$work/time" sh -c 'find "$1" -type f -print0 | sort -z | xargs -0 cat > "$2"' _ "$out" "$work/cat.out"
    local w
    w=$(cat "$work/time")
    rm -f "$work/cat.out"
    read -r gw _ bytes < "$work/$label.result"
    awk -v l="$label" -v w="$w" -v g="$gw" -v b="$bytes" 'BEGIN {
        printf "%-34s cat into a file: %7.2f s (%8.1f MB/s); generator / cat: %.2fx the time\n",
            l, w, (w > 0 ? b / 1e6 / w : 0), (w > 0 ? g / w : 0) }'
}

echo "uptime: $(uptime)"
echo "nproc: $(nproc)"
timed "json $ranks x $size" "$work/json" "$UNITRACE_GEN" --seed 1 trace "$work/json" --ranks "$ranks" --size "$size" -q
floor "json $ranks x $size" "$work/json"
timed "pftrace $ranks x $size (JSON size)" "$work/pf" "$UNITRACE_GEN" --seed 1 trace "$work/pf" --ranks "$ranks" --size "$size" --format pftrace -q
floor "pftrace $ranks x $size (JSON size)" "$work/pf"
timed "result-dir $small x 40 events" "$work/small" "$UNITRACE_GEN" --seed 1 trace "$work/small" --ranks "$small" --events 40 --layout result-dir -q
floor "result-dir $small x 40 events" "$work/small"
