#!/usr/bin/env bash
# Benchmark of `compare` on wide metric CSVs (docs/compare.md#speed): the
# matching of metrics is linear in the columns. For each width it prints,
# in the same run, the floor (`analyze -l` of both files, which reads the
# same header and rows) and `compare -q A B`, with wall seconds and peak
# RSS, and their ratio.
#
#   benches/compare_columns.sh [--widths "20000 40000 150000"] [--work DIR] [--repeat R]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
widths="20000 40000 150000"
repeat=3
work=""
while [ $# -gt 0 ]; do
    case "$1" in
        --widths) widths="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/compare-columns.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
(cd "$repo" && cargo build --release --locked -p compare -p analyze >&2)
compare="$CARGO_TARGET_DIR/release/compare"
analyze="$CARGO_TARGET_DIR/release/analyze"

# wide N SHIFT FILE: N metric columns (short names: a line stays under the
# 1 MiB line cap), three rows of one kernel.
wide() {
    awk -v n="$1" -v shift="$2" 'BEGIN {
        printf "=== Device #0 Metrics ===\n\nKernel,GlobalInstanceId,GpuTime[ns]"
        for (c = 0; c < n; c++) printf ",m%x", c
        printf "\n"
        for (r = 0; r < 3; r++) {
            printf "gemm,%d,%d", r + 1, 1000 + r + shift
            for (c = 0; c < n; c++) printf ",%d", (c + r + shift) % 10
            printf "\n"
        }
    }' > "$3"
}

# best LABEL CMD...: the fastest of $repeat runs, "wall_s rss_kb".
best() {
    local t="$work/time.txt" out="" i
    for ((i = 0; i < repeat; i++)); do
        /usr/bin/time -f "%e %M" -o "$t" "$@" > /dev/null
        if [ -z "$out" ] || awk -v a="$(cut -d' ' -f1 "$t")" -v b="${out%% *}" 'BEGIN { exit !(a < b) }'; then
            out="$(cat "$t")"
        fi
    done
    echo "$out"
}

echo "$(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); best of $repeat"
for n in $widths; do
    wide "$n" 0 "$work/a$n.csv"
    wide "$n" 1 "$work/b$n.csv"
    read -r fs frss <<< "$(best sh -c "'$analyze' -l '$work/a$n.csv' && '$analyze' -l '$work/b$n.csv'")"
    read -r cs crss <<< "$(best "$compare" -q "$work/a$n.csv" "$work/b$n.csv")"
    awk -v n="$n" -v fs="$fs" -v cs="$cs" -v crss="$crss" 'BEGIN {
        printf "%7d columns: floor (analyze -l both) %6.2f s | compare %6.2f s, %6.1f MB peak RSS | ratio %5.1f\n",
            n, fs, cs, crss / 1024, cs / (fs > 0 ? fs : 0.01)
    }'
done
