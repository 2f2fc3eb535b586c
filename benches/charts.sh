#!/usr/bin/env bash
# Benchmark of the chart modes of `analyze` (docs/benchmarks.md#charts) against the original
# analyzeperfmetrics.py, measured in the same run.
#
#   benches/charts.sh                       # ours alone
#   ORIG=/path/to/scripts/metrics/analyzeperfmetrics.py PYTHON=/path/to/python \
#       benches/charts.sh                   # plus the original on the small file
#
# Environment:
#   UNITRACE_GEN  the input generator (default: the workspace's unitrace-gen, built)
#   ORIG, PYTHON  the original script and a Python with pandas + matplotlib
#   ORIG_TIMEOUT  seconds the original may run per case (default 900); when it
#                 runs out, its full time is extrapolated from the instances it
#                 finished (printed as an estimate)
#   SMALL, LARGE  generated sizes (default 100MB and 1GB; LARGE=0 skips it)
#   WORK          scratch folder (default: a temporary one, removed at the end)
#
# Cases, on a generated PVC sampling CSV (ComputeBasic metric set):
#   one-kernel: -k <first kernel> -i 0 -m <first ComputeBasic -m set> -y ...
#   all:        -i 0 -f pvc/ComputeBasic.txt (every instance of every kernel)
# Printed per case: wall time, peak RSS (/usr/bin/time), MB/s of input, pages,
# and the ratio original/ours.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
ORIG=${ORIG:-}
PYTHON=${PYTHON:-python3}
ORIG_TIMEOUT=${ORIG_TIMEOUT:-900}
SMALL=${SMALL:-100MB}
LARGE=${LARGE:-1GB}
if [ -n "${WORK:-}" ]; then
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target}
(cd "$repo" && cargo build --release --locked -q -p analyze)
ANALYZE=$CARGO_TARGET_DIR/release/analyze

SET='XVE_STALL[%],XVE_INST_EXECUTED_ALU0_ALL_UTILIZATION[%],XVE_INST_EXECUTED_ALU1_ALL_UTILIZATION[%],XVE_INST_EXECUTED_SEND_ALL_UTILIZATION[%],XVE_INST_EXECUTED_CONTROL_ALL_UTILIZATION[%],XVE_INST_EXECUTED_XMX_ALL_UTILIZATION[%]'
YLABEL='XVE Stall and ALU Utilizations (%)'

# run NAME TIMEOUT CMD...: runs CMD with stdout to $WORK/NAME.out, sets WALL
# (s), RSS (MB), TIMED_OUT.
run() {
    local name=$1 limit=$2
    shift 2
    TIMED_OUT=0
    local start end
    start=$(date +%s.%N)
    if ! PYTHONUNBUFFERED=1 /usr/bin/time -f '%M' -o "$WORK/$name.rss" \
        timeout "$limit" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"; then
        if grep -q 'Command exited with non-zero status 124' "$WORK/$name.rss"; then
            TIMED_OUT=1
        else
            echo "$name failed:" >&2
            tail -3 "$WORK/$name.err" >&2
            exit 1
        fi
    fi
    end=$(date +%s.%N)
    WALL=$(echo "$end - $start" | bc -l)
    RSS=$(( $(tail -1 "$WORK/$name.rss") / 1024 ))
}

pages() {
    case $1 in
        *.pdf) grep -a -o '/Count [0-9]*' "$1" | tail -1 | cut -d' ' -f2 ;;
        *) echo '?' ;;
    esac
}

bench_file() {
    local csv=$1 with_orig=$2
    local mb kernel
    mb=$(echo "$(stat -c %s "$csv") / 1048576" | bc -l)
    kernel=$(awk -F'"' 'NF > 1 { print $2; exit }' "$csv")
    printf '\n== %s (%.0f MB), kernel %s\n' "$(basename "$csv")" "$mb" "$kernel"
    printf '%-11s %-9s %10s %9s %9s %8s %s\n' case tool wall_s rss_MB MB/s pages note
    for case in one-kernel all; do
        local ours_args=() orig_args=()
        if [ "$case" = one-kernel ]; then
            ours_args=(-k "$kernel" -i 0 -m "$SET" -y "$YLABEL")
            orig_args=("${ours_args[@]}")
        else
            ours_args=(-i 0 -f pvc/ComputeBasic.txt)
            orig_args=(-i 0 -f "$(dirname "$ORIG")/config/pvc/ComputeBasic.txt")
        fi
        rm -f "$WORK/ours.pdf"
        run "ours-$case" 100000 "$ANALYZE" "$csv" "${ours_args[@]}" -o "$WORK/ours.pdf"
        local ours_wall=$WALL ours_pages
        ours_pages=$(pages "$WORK/ours.pdf")
        local ours_instances
        ours_instances=$(grep -c '^Analyzed' "$WORK/ours-$case.out" || true)
        printf '%-11s %-9s %10.2f %9d %9.1f %8s %s\n' "$case" ours "$WALL" "$RSS" \
            "$(echo "$mb / $WALL" | bc -l)" "$ours_pages" "$ours_instances instances"
        rm -f "$WORK/ours.pdf"
        if [ "$with_orig" = 1 ] && [ -n "$ORIG" ]; then
            rm -f "$WORK/orig.pdf"
            run "orig-$case" "$ORIG_TIMEOUT" "$PYTHON" "$ORIG" "$csv" "${orig_args[@]}" -o "$WORK/orig.pdf"
            local done_instances note wall=$WALL
            done_instances=$(grep -c '^Analyzed' "$WORK/orig-$case.out" || true)
            if [ "$TIMED_OUT" = 1 ]; then
                # Extrapolate from the instances it finished.
                if [ "$done_instances" -gt 0 ]; then
                    wall=$(echo "$WALL * $ours_instances / $done_instances" | bc -l)
                    note="timed out after ${ORIG_TIMEOUT}s with $done_instances instances: wall time ESTIMATED"
                else
                    note="timed out after ${ORIG_TIMEOUT}s before any instance: ratio is a lower bound"
                fi
                printf '%-11s %-9s %10.2f %9d %9s %8s %s\n' "$case" original "$wall" "$RSS" '-' '-' "$note"
            else
                printf '%-11s %-9s %10.2f %9d %9.1f %8s %s\n' "$case" original "$WALL" "$RSS" \
                    "$(echo "$mb / $WALL" | bc -l)" "$(pdfinfo "$WORK/orig.pdf" 2>/dev/null | awk '/^Pages/ {print $2}')" \
                    "$done_instances instances"
            fi
            printf '%-11s ratio original/ours: %.1fx\n' "$case" "$(echo "$wall / $ours_wall" | bc -l)"
            rm -f "$WORK/orig.pdf"
        fi
    done
}

unitrace_gen metrics --size "$SMALL" "$WORK/small.csv" -q
bench_file "$WORK/small.csv" 1
rm -f "$WORK/small.csv"
if [ "$LARGE" != 0 ]; then
    unitrace_gen metrics --size "$LARGE" "$WORK/large.csv" -q
    bench_file "$WORK/large.csv" 0
    rm -f "$WORK/large.csv"
fi
