#!/usr/bin/env bash
# Benchmark of `tracestat` over many small ranks (docs/tracestat.md#many-ranks):
# the cost per rank file and the memory per rank, in one run and as
# partials + one combine, with the floor measured in the same run.
#
#   benches/ranks.sh [--ranks "4096 16384 65536"] [--blocks B] [--work DIR]
#                    [--events E] [--steps S] [--baseline TRACESTAT]
#
# For each rank count N: `unitrace-gen --seed 1 trace DIR --ranks N
# --events 40` (the generator's smallest ranks, about 8 KB each: the cost is
# per file, not per byte; `--events E --steps S` for ranks of E events in S
# steps, whose collectives the critical path crosses), the page cache
# warmed, then wall seconds, CPU seconds and peak RSS of
#   * the floor: `cat` of every input into one file on the same disk;
#   * one run: `tracestat DIR -q --json one.json`, and its time over the
#     floor's;
#   * B partials (default 16; one after the other here, on B machines in a
#     real run): `tracestat DIR --ranks BLOCK --partial p.i.json`: the sum
#     of their times, the largest RSS, the partials' bytes;
#   * the combine: `tracestat --combine p.*.json -q --json combined.json`,
#     whose report must equal the one run's (checked with cmp);
#   * with --baseline, that other tracestat binary's one run, its report
#     equal to this build's, and the ratio of their CPU times.
# `uptime` is printed first: the machine may be shared.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
. "$repo/scripts/unitrace_gen.sh"
counts="4096 16384 65536"
blocks=16
work=""
events=40
steps=()
baseline=""
while [ $# -gt 0 ]; do
    case "$1" in
        --ranks) counts="$2"; shift 2 ;;
        --events) events="$2"; shift 2 ;;
        --steps) steps=(--steps "$2"); shift 2 ;;
        --baseline) baseline="$2"; shift 2 ;;
        --blocks) blocks="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/ranks-bench.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
(cd "$repo" && cargo build --release --locked -p tracestat >&2)
bin="$CARGO_TARGET_DIR/release/tracestat"
unitrace_gen --version >/dev/null   # built once, outside the timings

# timed OUT COMMAND...: runs it under /usr/bin/time; leaves "wall cpu rss_kb" in OUT.
timed() {
    local out=$1; shift
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null
    read -r w u s m < "$work/time"
    awk -v w="$w" -v u="$u" -v s="$s" -v m="$m" 'BEGIN { print w, u + s, m }' > "$out"
}

line() { # LABEL WALL CPU RSS_KB [EXTRA]
    awk -v l="$1" -v w="$2" -v c="$3" -v m="$4" -v x="${5:-}" 'BEGIN {
        printf "  %-28s %8.2f s wall %8.2f s CPU  peak RSS %8.1f MB  %s\n", l, w, c, m / 1024, x }'
}

echo "uptime: $(uptime)"
echo "nproc: $(nproc)"
for n in $counts; do
    in="$work/ranks-$n-$events${steps[1]:+-${steps[1]}}"
    if [ ! -d "$in" ]; then
        timed "$work/gen" "$UNITRACE_GEN" --seed 1 trace "$in.tmp" --ranks "$n" --events "$events" "${steps[@]}" -q
        mv "$in.tmp" "$in"
        read -r gw gc gm < "$work/gen"
    fi
    bytes=$(du -sb "$in" | cut -f1)
    echo "$n ranks: $(find "$in" -type f | wc -l) files, $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB (written by unitrace-gen in ${gw:-?} s)"
    sync
    find "$in" -type f -print0 | xargs -0 cat > /dev/null   # warm the page cache

    timed "$work/floor" sh -c 'find "$1" -type f -print0 | sort -z | xargs -0 cat > "$2"' _ "$in" "$work/cat.out"
    rm -f "$work/cat.out"
    read -r fw fc fm < "$work/floor"
    line "floor: cat into a file" "$fw" "$fc" "$fm"

    timed "$work/one" "$bin" "$in" -q --json "$work/one.json"
    read -r ow oc om < "$work/one"
    line "one run" "$ow" "$oc" "$om" "$(awk -v o="$ow" -v f="$fw" 'BEGIN { printf "%.1fx the floor'"'"'s wall", (f > 0 ? o / f : 0) }')"
    if [ -n "$baseline" ]; then
        timed "$work/base" "$baseline" "$in" -q --json "$work/base.json"
        read -r bw bc bm < "$work/base"
        same=$(cmp -s "$work/one.json" "$work/base.json" && echo "same report" || echo "report DIFFERS")
        line "baseline: one run" "$bw" "$bc" "$bm" "$(awk -v b="$bc" -v o="$oc" 'BEGIN { printf "%.2fx this build'"'"'s CPU", (o > 0 ? b / o : 0) }'), $same"
        rm -f "$work/base.json"
    fi

    rm -f "$work"/p.*.json
    per=$(( (n + blocks - 1) / blocks ))
    pw=0; pc=0; pm=0
    for i in $(seq 0 $((blocks - 1))); do
        lo=$((i * per)); hi=$(( (i + 1) * per - 1 )); [ "$hi" -lt "$n" ] || hi=$((n - 1))
        [ "$lo" -le "$hi" ] || continue
        timed "$work/part" "$bin" "$in" --ranks "$lo-$hi" --partial "$work/p.$i.json"
        read -r w c m < "$work/part"
        pw=$(awk -v a="$pw" -v b="$w" 'BEGIN { print a + b }')
        pc=$(awk -v a="$pc" -v b="$c" 'BEGIN { print a + b }')
        [ "$m" -le "$pm" ] || pm=$m
    done
    pbytes=$(cat "$work"/p.*.json | wc -c)
    line "$blocks partials (sum, max RSS)" "$pw" "$pc" "$pm" "$(awk -v b="$pbytes" -v n="$n" 'BEGIN { printf "%.1f MB of partials, %.0f bytes a rank", b / 1e6, b / n }')"

    timed "$work/comb" "$bin" --combine -q --json "$work/combined.json" "$work"/p.*.json
    read -r cw cc cm < "$work/comb"
    same=$(cmp -s "$work/one.json" "$work/combined.json" && echo "the one run's report" || echo "DIFFERENT from the one run's report")
    line "combine" "$cw" "$cc" "$cm" "$same"
    tw=$(awk -v a="$pw" -v b="$cw" 'BEGIN { print a + b }')
    echo "  partials + combine: $(awk -v t="$tw" -v f="$fw" 'BEGIN { printf "%.2f s wall, %.1fx the floor'"'"'s", t, (f > 0 ? t / f : 0) }')"
    rm -f "$work"/p.*.json "$work/one.json" "$work/combined.json"
    rm -rf "$in"
done
