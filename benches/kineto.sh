#!/usr/bin/env bash
# Benchmark of Kineto (PyTorch profiler) input against HTA, the peer tool
# (docs/formats.md#kineto-json), with the floors measured in the same run.
#
#   benches/kineto.sh [--src DIR] [--ranks N] [--total-mb MB] [--work DIR]
#                     [--python PY] [--skip-hta]
#
# Replicates a real multi-rank Kineto trace set (default: our 4-rank DDP
# recording, testdata/kineto/recorded/clean) to --total-mb MB (default 450)
# over --ranks ranks (default 8) with benches/kineto/replicate.py (time and
# ids shifted, so every copy is a distinct stretch of the run), gzips a copy
# of it, warms the page cache, then prints wall seconds, MB/s (of
# uncompressed JSON), CPU seconds and peak RSS for:
#   * the floors: `cat` of the JSON files, `gzip -dc` of the .gz files;
#   * HTA: TraceAnalysis (load) + temporal breakdown + comm/comp overlap on
#     the JSON files (benches/kineto/hta_run.py; also prints the peak RSS of
#     HTA's whole process tree, since it parses ranks in worker processes);
#   * tracestat on the same JSON files and on the .gz files, with the ratio
#     of its wall time and peak RSS to HTA's.
# HTA: a python with `holistictraceanalysis==0.5.0 psutil pyyaml "pandas<3"`
# (--python or $PYTHON; testdata/kineto/README.md#hta-reference). tracestat: $TRACESTAT, else
# built here with cargo. `uptime` is printed before and after: on a shared
# machine the figures mean little when the load exceeds the core count.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
src="$repo/testdata/kineto/recorded/clean"
py="${PYTHON:-python3}"
ranks=8
total_mb=450
work=""
skip_hta=0
while [ $# -gt 0 ]; do
    case "$1" in
        --src) src="$2"; shift 2 ;;
        --ranks) ranks="$2"; shift 2 ;;
        --total-mb) total_mb="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --python) py="$2"; shift 2 ;;
        --skip-hta) skip_hta=1; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/kineto-bench.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

if [ -n "${TRACESTAT:-}" ]; then
    bin="$TRACESTAT"
else
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
    (cd "$repo" && cargo build --release --locked -p tracestat >&2)
    bin="$CARGO_TARGET_DIR/release/tracestat"
fi

in="$work/json-$ranks-$total_mb"
gz="$work/gz-$ranks-$total_mb"
if [ ! -d "$in" ]; then
    echo "replicating $src to $ranks ranks, ~$total_mb MB, in $in" >&2
    "$py" "$repo/benches/kineto/replicate.py" "$src" "$in.tmp" --ranks "$ranks" --total-mb "$total_mb"
    mv "$in.tmp" "$in"
fi
if [ ! -d "$gz" ]; then
    mkdir -p "$gz.tmp"
    for f in "$in"/*.json; do gzip -c "$f" > "$gz.tmp/$(basename "$f").gz"; done
    mv "$gz.tmp" "$gz"
fi
mapfile -t files < <(ls "$in"/*.json | sort -V)
mapfile -t gzfiles < <(ls "$gz"/*.json.gz | sort -V)
bytes=$(cat "${files[@]}" | wc -c)
gzbytes=$(cat "${gzfiles[@]}" | wc -c)
sync
cat "${files[@]}" "${gzfiles[@]}" > /dev/null   # warm the page cache for every run alike

# run LABEL CMD... : runs CMD once (HTA takes minutes), prints wall seconds,
# MB/s of uncompressed JSON, CPU seconds and peak RSS; keeps the command's
# output in $work/out.txt and the figures in $work/last.
run() {
    local label="$1"; shift
    local t="$work/time.txt" rc=0
    /usr/bin/time -f "%e %U %S %M" -o "$t" "$@" > "$work/out.txt" 2> "$work/err.txt" || rc=$?
    read -r secs user sys rss_kb < <(tail -n 1 "$t")
    awk -v l="$label" -v s="$secs" -v u="$user" -v y="$sys" -v b="$bytes" -v r="$rss_kb" \
        'BEGIN { c = u + y; printf "%-34s %8.2f s %7.1f MB/s | cpu %8.2f s | %8.1f MB peak RSS\n", l, s, b / 1e6 / (s > 0 ? s : 0.01), c, r / 1024 }'
    echo "$secs $rss_kb $rc" > "$work/last"
    return 0
}

echo "uptime: $(uptime)"
echo "input: ${#files[@]} ranks, $((bytes / 1000000)) MB of JSON ($((gzbytes / 1000000)) MB gzipped) from $src ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
run "floor: cat > /dev/null" cat "${files[@]}"
run "floor: gzip -dc > /dev/null" gzip -dc "${gzfiles[@]}"

hta_secs="" hta_rss=""
if [ "$skip_hta" = 0 ]; then
    run "HTA load+breakdown+overlap" "$py" "$repo/benches/kineto/hta_run.py" "$in"
    read -r hta_secs hta_rss hta_rc < "$work/last"
    if [ "$hta_rc" != 0 ]; then
        echo "HTA failed (exit $hta_rc):"; tail -n 5 "$work/err.txt"; hta_secs=""
    else
        sed 's/^/  /' "$work/out.txt"
        # HTA parses ranks in worker processes: compare against its tree peak.
        tree_mib=$(grep -o 'process tree [0-9]*' "$work/out.txt" | awk '{ print $3 }')
        if [ -n "$tree_mib" ] && [ $((tree_mib * 1024)) -gt "$hta_rss" ]; then hta_rss=$((tree_mib * 1024)); fi
    fi
fi

# tracestat on the same traces: its time, its breakdown table (or its
# one-line error). Until tracestat reads every part of Kineto traces
# (docs/formats.md#kineto-json) its figures and the ratios to HTA below are
# those of an incomplete reader.
for kind in json gz; do
    if [ "$kind" = json ]; then set -- "${files[@]}"; else set -- "${gzfiles[@]}"; fi
    run "tracestat ($kind)" "$bin" "$@"
    read -r ts_secs ts_rss ts_rc < "$work/last"
    if [ "$ts_rc" != 0 ]; then
        echo "  tracestat ($kind) failed (exit $ts_rc): $(head -n 1 "$work/err.txt")"
        continue
    fi
    # Its breakdown table, to see what it made of the traces.
    awk '/^Where the time went/ { on = 1 } on && NF == 0 { exit } on' "$work/out.txt" | head -n 12 | sed 's/^/  /'
    # >>> tracestat against HTA: printed once tracestat reads Kineto traces.
    if [ -n "$hta_secs" ]; then
        awk -v a="$hta_secs" -v b="$ts_secs" -v m="$hta_rss" -v n="$ts_rss" \
            'BEGIN { printf "  tracestat is %.0fx faster than HTA, with %.2fx its peak RSS\n", a / (b > 0 ? b : 0.01), n / (m > 0 ? m : 1) }'
    fi
    # <<<
done
echo "uptime: $(uptime)"
