#!/usr/bin/env bash
# Benchmark of `mergetrace` on Perfetto protobuf traces (.pftrace) against
# the JSON form of the same events, with `cat` of the same files as the
# floor, all in one run.
#
#   benches/mergetrace_pftrace.sh [--gen UNITRACE_GEN] [--ranks N]
#                                 [--distinct K] [--size SIZE] [--work DIR]
#                                 [--out DIR] [--repeat R]
#
# Generates K distinct ranks (default: all N, so every rank has its own
# pids, uuids and flow ids, as a real run) of SIZE (default 500MB of JSON per
# rank; the .pftrace of the same events is about half of that) in both
# formats with the repository's generator (`unitrace-gen --seed 1 trace
# --ranks K --size SIZE [--format pftrace]`, docs/unitrace-gen.md: the
# workspace's, built, or $UNITRACE_GEN / --gen). With K < N they are copied
# round-robin to N inputs (copies share track uuids, the worst case of the
# uuid renaming). Each input is a distinct file (distinct inode), so none is
# deduplicated.
#
# Per line: wall seconds, MB/s of that format's bytes, CPU seconds, MB per CPU
# second, peak RSS (best of R runs). The JSON and .pftrace lines merge the
# same events, so their wall times compare directly; `cat` is the floor of
# reading the inputs and writing the output. --out DIR (e.g. /dev/shm) keeps
# the merged output off the disk, whose write-back otherwise bounds the wall
# time.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
ranks=8
distinct=
size=500MB
repeat=2
work=""
outdir=""
while [ $# -gt 0 ]; do
    case "$1" in
        --gen) UNITRACE_GEN="$2"; shift 2 ;;
        --ranks) ranks="$2"; shift 2 ;;
        --distinct) distinct="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --out) outdir="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
distinct="${distinct:-$ranks}"
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/mergetrace-pftrace-bench.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
outdir="${outdir:-$work}"
mkdir -p "$outdir"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
(cd "$repo" && cargo build --release --locked -p mergetrace >&2)
bin="$CARGO_TARGET_DIR/release/mergetrace"

# inputs FORMAT EXT: generates the distinct ranks once, then N copies.
inputs() {
    local format="$1" ext="$2"
    local src="$work/src-$format-$distinct-$size" dst="$work/in-$format-$ranks-$distinct-$size"
    if [ ! -d "$src" ]; then
        echo "generating $distinct $format traces of $size (JSON-equivalent) in $src" >&2
        unitrace_gen --seed 1 trace "$src.tmp" --ranks "$distinct" --size "$size" --format "$format" -q
        mv "$src.tmp" "$src"
    fi
    if [ ! -d "$dst" ]; then
        mkdir -p "$dst.tmp"
        mapfile -t srcs < <(ls "$src"/*."$ext" | sort)
        local i
        for ((i = 0; i < ranks; i++)); do
            cp "${srcs[$((i % ${#srcs[@]}))]}" "$dst.tmp/rank$i.$ext"
        done
        mv "$dst.tmp" "$dst"
    fi
    ls "$dst"/*."$ext" | sort -V
}

mapfile -t json_files < <(inputs json json)
mapfile -t pf_files < <(inputs pftrace pftrace)
json_bytes=$(cat "${json_files[@]}" | wc -c)
pf_bytes=$(cat "${pf_files[@]}" | wc -c)
sync
cat "${json_files[@]}" "${pf_files[@]}" > /dev/null   # warm the page cache alike

# run LABEL BYTES OUT CMD... : runs CMD $repeat times (the fastest is kept)
# and prints wall seconds, MB/s, CPU seconds, MB per CPU second, peak RSS.
run() {
    local label="$1" nbytes="$2" out="$3"; shift 3
    local t="$work/time.txt" best="" i
    for ((i = 0; i < repeat; i++)); do
        /usr/bin/time -f "%e %U %S %M" -o "$t" "$@" > /dev/null
        rm -f "$out"
        if [ -z "$best" ] || awk -v a="$(cut -d' ' -f1 "$t")" -v b="$(cut -d' ' -f1 <<< "$best")" 'BEGIN { exit !(a < b) }'; then
            best="$(cat "$t")"
        fi
    done
    read -r secs user sys rss_kb <<< "$best"
    last_secs="$secs"
    last_cpu="$(awk -v u="$user" -v y="$sys" 'BEGIN { print u + y }')"
    awk -v l="$label" -v s="$secs" -v u="$user" -v y="$sys" -v b="$nbytes" -v r="$rss_kb" \
        'BEGIN { c = u + y; printf "%-40s %7.2f s %7.1f MB/s | cpu %7.2f s %7.1f MB/cpu-s | %7.1f MB peak RSS\n", l, s, b / 1e6 / (s > 0 ? s : 0.01), c, b / 1e6 / (c > 0 ? c : 0.01), r / 1024 }'
}

echo "inputs: ${#json_files[@]} x JSON ($((json_bytes / 1000000)) MB) and ${#pf_files[@]} x .pftrace ($((pf_bytes / 1000000)) MB) of the same events; $distinct distinct ranks; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); best of $repeat runs each"
out_json="$outdir/out.json"
out_pf="$outdir/out.pftrace"
run "cat .pftrace (floor)" "$pf_bytes" "$out_pf" sh -c 'out="$1"; shift; cat "$@" > "$out"' sh "$out_pf" "${pf_files[@]}"
run "mergetrace .pftrace" "$pf_bytes" "$out_pf" "$bin" -o "$out_pf" "${pf_files[@]}"
pf_secs="$last_secs" pf_cpu="$last_cpu"
run "mergetrace .pftrace --stats" "$pf_bytes" "$out_pf" "$bin" -o "$out_pf" --stats "$work/stats.csv" "${pf_files[@]}"
run "mergetrace .pftrace --remap-pids" "$pf_bytes" "$out_pf" "$bin" -o "$out_pf" --remap-pids "${pf_files[@]}"
run "cat JSON (floor)" "$json_bytes" "$out_json" sh -c 'out="$1"; shift; cat "$@" > "$out"' sh "$out_json" "${json_files[@]}"
run "mergetrace JSON" "$json_bytes" "$out_json" "$bin" -o "$out_json" "${json_files[@]}"
json_secs="$last_secs" json_cpu="$last_cpu"
run "mergetrace JSON --stats" "$json_bytes" "$out_json" "$bin" -o "$out_json" --stats "$work/stats.csv" "${json_files[@]}"
awk -v pb="$pf_bytes" -v jb="$json_bytes" -v pc="$pf_cpu" -v jc="$json_cpu" -v ps="$pf_secs" -v js="$json_secs" \
    'BEGIN { m = 0.01; printf "per byte: .pftrace %.1f MB/cpu-s vs JSON %.1f MB/cpu-s (%.2fx); same events: .pftrace %.2f s CPU / %.2f s wall vs JSON %.2f s / %.2f s\n", pb / 1e6 / (pc > m ? pc : m), jb / 1e6 / (jc > m ? jc : m), (pb / (pc > m ? pc : m)) / (jb / (jc > m ? jc : m)), pc, ps, jc, js }'
rm -f "$out_json" "$out_pf" "$work/stats.csv"
