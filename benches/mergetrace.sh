#!/usr/bin/env bash
# Benchmark of `mergetrace` against the original mergetrace.py.
#
#   benches/mergetrace.sh [--gen UNITRACE_GEN] [--orig mergetrace.py] [--python PY]
#                         [--ranks N] [--size SIZE] [--orig-files K] [--work DIR]
#                         [--out DIR] [--repeat R] [--bin MERGETRACE]
#
# Generates N per-rank traces of SIZE each with the repository's generator
# (`unitrace-gen`, docs/unitrace-gen.md: the workspace's, built, or
# $UNITRACE_GEN / --gen), merges
# them with our binary (all cores, then pinned to one core) and prints MB/s
# and peak RSS, next to `cat` of the same files into a file (the floor).
# With --orig (or $MERGETRACE_PY) the original runs in the same
# session on COPIES of the first K files (default 1: it holds each whole file
# as Python objects, ~4.4x its size in RAM), and our binary on the same K
# files, to give the speed ratio on equal input.
# Besides wall time, each line gives the CPU seconds (user + sys) and the
# input MB per CPU second: on a shared machine that is the steadier measure
# of the one-core speed. --out DIR (e.g. /dev/shm) keeps the merged output
# off the disk, whose write-back otherwise bounds the wall time. --bin
# measures that mergetrace binary instead of building the workspace's (a
# before/after comparison on one machine, in one session).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
orig="${MERGETRACE_PY:-}"
py="${PYTHON:-python3}"
ranks=8
size=500MB
orig_files=1
repeat=2
work=""
outdir=""
bin=""
while [ $# -gt 0 ]; do
    case "$1" in
        --gen) UNITRACE_GEN="$2"; shift 2 ;;
        --orig) orig="$2"; shift 2 ;;
        --python) py="$2"; shift 2 ;;
        --ranks) ranks="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --orig-files) orig_files="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --out) outdir="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --bin) bin="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/mergetrace-bench.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
outdir="${outdir:-$work}"
mkdir -p "$outdir"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
if [ -z "$bin" ]; then
    (cd "$repo" && cargo build --release --locked -p mergetrace >&2)
    bin="$CARGO_TARGET_DIR/release/mergetrace"
fi

in="$work/in-$ranks-$size"
if [ ! -d "$in" ]; then
    echo "generating $ranks traces of $size in $in" >&2
    unitrace_gen --seed 1 trace "$in.tmp" --ranks "$ranks" --size "$size" -q
    mv "$in.tmp" "$in"
fi
mapfile -t files < <(ls "$in"/*.json | sort -t. -k3,3n)
bytes=$(cat "${files[@]}" | wc -c)
cat "${files[@]}" > /dev/null   # warm the page cache for every run alike

# run LABEL BYTES CMD... : runs CMD $repeat times (the machine may be
# shared: the fastest run is kept) and prints wall seconds, MB/s, CPU
# seconds, MB per CPU second and peak RSS of that run.
run() {
    local label="$1" nbytes="$2"; shift 2
    local t="$work/time.txt" best="" i
    for ((i = 0; i < repeat; i++)); do
        /usr/bin/time -f "%e %U %S %M" -o "$t" "$@" > /dev/null
        rm -f "$outdir/out.json"
        if [ -z "$best" ] || awk -v a="$(cut -d' ' -f1 "$t")" -v b="$(cut -d' ' -f1 <<< "$best")" 'BEGIN { exit !(a < b) }'; then
            best="$(cat "$t")"
        fi
    done
    read -r secs user sys rss_kb <<< "$best"
    awk -v l="$label" -v s="$secs" -v u="$user" -v y="$sys" -v b="$nbytes" -v r="$rss_kb" \
        'BEGIN { c = u + y; printf "%-38s %7.2f s %7.1f MB/s | cpu %7.2f s %7.1f MB/cpu-s | %7.1f MB peak RSS\n", l, s, b / 1e6 / (s > 0 ? s : 0.01), c, b / 1e6 / (c > 0 ? c : 0.01), r / 1024 }'
    echo "$secs $user $sys" > "$work/last_secs"
}

echo "input: ${#files[@]} files, $((bytes / 1000000)) MB ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); best of $repeat runs each)"
# The floor: copying the same bytes into a file with `cat` (read, write,
# no parsing). mergetrace reads, validates and writes the same bytes.
run "cat > file (floor)" "$bytes" sh -c 'cat "$@" > "$0"' "$outdir/out.json" "${files[@]}"
read -r floor_secs floor_u floor_s < "$work/last_secs"
run "mergetrace (all cores)" "$bytes" "$bin" -o "$outdir/out.json" "${files[@]}"
run "mergetrace (taskset 1 core)" "$bytes" taskset -c 0 "$bin" -o "$outdir/out.json" "${files[@]}"
read -r one_secs one_u one_s < "$work/last_secs"
awk -v f="$floor_secs" -v o="$one_secs" -v fc="$floor_u $floor_s" -v oc="$one_u $one_s" \
    'BEGIN { split(fc, a, " "); split(oc, b, " "); printf "mergetrace on 1 core vs the cat floor: %.2fx the wall time, %.2fx the CPU time\n", o / (f > 0 ? f : 0.01), (b[1] + b[2]) / (a[1] + a[2] > 0 ? a[1] + a[2] : 0.01) }'
run "mergetrace --stats (all cores)" "$bytes" "$bin" -o "$outdir/out.json" --stats "$work/stats.csv" "${files[@]}"
run "mergetrace --stats (taskset 1 core)" "$bytes" taskset -c 0 "$bin" -o "$outdir/out.json" --stats "$work/stats.csv" "${files[@]}"
read -r stats_secs stats_u stats_s < "$work/last_secs"
awk -v o="$one_secs" -v s="$stats_secs" -v oc="$one_u $one_s" -v sc="$stats_u $stats_s" \
    'BEGIN { split(oc, a, " "); split(sc, b, " "); printf "--stats on 1 core vs the plain merge on 1 core: %.2fx the wall time, %.2fx the CPU time\n", s / (o > 0 ? o : 0.01), (b[1] + b[2]) / (a[1] + a[2] > 0 ? a[1] + a[2] : 0.01) }'
run "mergetrace --remap-pids --align start" "$bytes" "$bin" -o "$outdir/out.json" --remap-pids --align start "${files[@]}"
rm -f "$outdir/out.json"

if [ -n "$orig" ]; then
    sub=("${files[@]:0:$orig_files}")
    sub_bytes=$(cat "${sub[@]}" | wc -c)
    echo "same-run comparison on ${#sub[@]} file(s), $((sub_bytes / 1000000)) MB (the original edits its inputs: it runs on copies)"
    run "mergetrace" "$sub_bytes" "$bin" -o "$outdir/out.json" "${sub[@]}"
    read -r ours ours_u ours_s < "$work/last_secs"
    mkdir -p "$work/copies"
    copies=()
    for f in "${sub[@]}"; do cp "$f" "$work/copies/"; copies+=("$work/copies/$(basename "$f")"); done
    cat "${copies[@]}" > /dev/null
    # Once only: it is slow, and it rewrites inputs it cannot parse.
    local_repeat=$repeat; repeat=1
    run "mergetrace.py (original)" "$sub_bytes" "$py" "$orig" -o "$outdir/out.json" "${copies[@]}"
    repeat=$local_repeat
    read -r theirs theirs_u theirs_s < "$work/last_secs"
    awk -v a="$theirs" -v b="$ours" -v au="$theirs_u" -v as="$theirs_s" -v bu="$ours_u" -v bs="$ours_s" \
        'BEGIN { printf "speed-up vs mergetrace.py: %.1fx wall, %.1fx CPU\n", a / (b > 0 ? b : 0.01), (au + as) / (bu + bs > 0 ? bu + bs : 0.01) }'
    rm -rf "$work/copies" "$outdir/out.json"
fi
