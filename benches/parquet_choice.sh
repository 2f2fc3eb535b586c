#!/usr/bin/env bash
# The Parquet writer choice, measured on this machine: the
# project's writer (render/src/parquet.rs on the `parquet` crate, no arrow,
# zstd) against polars (Parquet writing only), with the standalone crate
# benches/parquet_choice (not a workspace member; its own Cargo.lock).
# Figures and decision: docs/benchmarks.md#parquet-writer-polars-vs-parquet.
#
#   benches/parquet_choice.sh [--gen UNITRACE_GEN] [--size SIZE] [--seed S]
#                             [--work DIR] [--repeat R] [--steps build,write]
#
# build: for each writer, a cold `cargo build --release --locked` of the
#   bench crate in its own empty target dir (crates fetched beforehand, so
#   no download is timed), with `nproc` and the load before and after, wall
#   and CPU seconds, crates compiled, and the binary's size as built and
#   stripped. The arrow-parquet build holds the project's writer, the
#   `parquet` reader and the checks; the polars build holds polars only.
# write: generates one trace of SIZE (default 500MB, seed 0) with
#   unitrace-gen (docs/unitrace-gen.md; the workspace's, or $UNITRACE_GEN
#   / --gen), exports it once with `tracestat -q --events DS` (built
#   from this tree), reads DS's Parquet into memory columns (`prepare`, the
#   `parquet` crate's reader; a dump both writers load), then times each
#   writer writing those rows (same zstd level 1, row groups of 65,536 rows,
#   dictionaries for names; best of R runs, default 3) pinned to one core,
#   and polars once more with its columns in parallel on two cores; prints
#   rows/s, MB of the source JSON per second and per CPU second, output
#   size, and peak RSS (/usr/bin/time -v; the loaded columns are in it, the
#   writer's own share is printed apart); finally reads every output back
#   and checks that row count and every column's checksum equal the source's.
# Everything generated goes to --work (default a temporary folder, removed
# at the end; with --work it is kept, and a trace or dataset already there
# is reused).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
crate="$repo/benches/parquet_choice"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
size=500MB
seed=0
repeat=3
work=""
steps="build,write"
while [ $# -gt 0 ]; do
    case "$1" in
        --gen) UNITRACE_GEN="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --steps) steps="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/parquet-choice.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
work="$(cd "$work" && pwd)"

features_of() {
    case "$1" in
        arrow-parquet) echo "--features arrow-parquet" ;;
        polars) echo "--no-default-features --features polars" ;;
    esac
}
bin_of() { echo "$work/target-$1/release/parquet_choice"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "parquet_choice: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $(load)"

if [[ ",$steps," == *",build,"* ]]; then
    (cd "$crate" && cargo fetch --locked -q)
    for w in polars arrow-parquet; do
        t="$work/target-$w"
        rm -rf "$t"
        # shellcheck disable=SC2046
        tree="$(cd "$crate" && cargo tree --locked -e normal --prefix none $(features_of "$w") | sed 's/ (\*)$//' | sort -u)"
        net="$({ grep -oE '^(tokio|hyper|reqwest|rustls|ring|openssl-sys|object_store) ' <<< "$tree" || true; } | tr -d ' ' | paste -sd, -)"
        echo "== cold build: $w: $(wc -l <<< "$tree") packages (network/async among them: ${net:-none}); $(nproc) cores, load before $(load)"
        echo "   cargo build --release --locked $(features_of "$w")"
        # shellcheck disable=SC2046
        (cd "$crate" && CARGO_TARGET_DIR="$t" /usr/bin/time -f "%e %U %S" -o "$work/build-$w.time" \
            cargo build --release --locked -q $(features_of "$w"))
        read -r secs user sys < "$work/build-$w.time"
        crates=$(find "$t/release/deps" -name '*.rlib' | wc -l)
        b="$(bin_of "$w")"
        strip -o "$work/stripped-$w" "$b"
        awk -v w="$w" -v s="$secs" -v u="$user" -v y="$sys" -v c="$crates" -v l="$(load)" \
            -v b="$(stat -c %s "$b")" -v st="$(stat -c %s "$work/stripped-$w")" 'BEGIN {
            printf "   %s: %.0f s wall (%.1f min), %.0f CPU s, %d library crates; binary %.1f MB (stripped %.1f MB); load after %s\n",
                w, s, s / 60, u + y, c, b / 1e6, st / 1e6, l }'
    done
fi

if [[ ",$steps," == *",write,"* ]]; then
    for w in arrow-parquet polars; do
        [ -x "$(bin_of "$w")" ] || { echo "no $(bin_of "$w"): run the build step first (same --work)" >&2; exit 2; }
    done
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
    (cd "$repo" && cargo build --release --locked -q -p tracestat)
    tracestat="$CARGO_TARGET_DIR/release/tracestat"
    trace_dir="$work/trace-$size-seed$seed"
    if [ ! -d "$trace_dir" ]; then
        echo "generating one $size trace in $trace_dir"
        unitrace_gen --seed "$seed" trace "$trace_dir.tmp" --ranks 1 --size "$size" -q
        mv "$trace_dir.tmp" "$trace_dir"
    fi
    trace="$(ls "$trace_dir"/*.json | head -n 1)"
    json_bytes=$(stat -c %s "$trace")
    ds="$work/events"
    if ! compgen -G "$ds/rank=*/_SUCCESS" > /dev/null; then
        rm -rf "$ds"
        "$tracestat" -q --events "$ds" "$trace"
    fi
    echo "trace: $trace, $((json_bytes / 1000000)) MB of JSON; dataset $(du -sb "$ds" | cut -f1) bytes"
    "$(bin_of arrow-parquet)" prepare "$ds" "$work/columns.bin"

    # run_writer LABEL WRITER CPUS [--parallel]
    run_writer() {
        local label="$1" w="$2" cpus="$3"; shift 3
        echo "== write: $label (taskset -c $cpus, load before $(load))"
        /usr/bin/time -v -o "$work/time-$label.txt" taskset -c "$cpus" "$(bin_of "$w")" write \
            "$work/columns.bin" "$work/out-$label.parquet" --json-bytes "$json_bytes" \
            --repeat "$repeat" "$@" | tee "$work/write-$label.txt"
        awk -F': ' '/Maximum resident set size/ { printf "   peak RSS %.1f MB (/usr/bin/time -v)\n", $2 / 1024 }' "$work/time-$label.txt"
    }
    run_writer arrow-parquet arrow-parquet 0
    run_writer polars polars 0
    run_writer polars-parallel polars 0,1 --parallel
    echo "== read back"
    "$(bin_of arrow-parquet)" check "$ds" "$work/out-arrow-parquet.parquet" \
        "$work/out-polars.parquet" "$work/out-polars-parallel.parquet"
    best() { sed -n 's/.* best_s=\([0-9.]*\).*/\1/p' "$work/write-$1.txt"; }
    awk -v a="$(best arrow-parquet)" -v p="$(best polars)" -v q="$(best polars-parallel)" 'BEGIN {
        printf "one core: parquet %.3f s, polars %.3f s (parquet %.2fx faster); polars on 2 cores %.3f s\n", a, p, p / a, q }'
fi
echo "done: $(date -u '+%H:%M UTC'), load $(load)"
