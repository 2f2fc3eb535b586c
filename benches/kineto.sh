#!/usr/bin/env bash
# Benchmark of Kineto (PyTorch profiler) input against HTA, the peer tool
# (docs/formats.md#kineto-json), with the floors measured in the same run.
#
#   benches/kineto.sh [--src DIR] [--ranks N] [--total-mb MB] [--work DIR]
#                     [--python PY] [--skip-hta] [--baseline TRACESTAT]
#                     [--hta-backends LIST]
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
#     HTA's whole process tree, since it parses ranks in worker processes),
#     once per parser backend of --hta-backends (default
#     `json,ijson_batch_and_compress`: HTA's default, and the streaming one
#     its documentation recommends for large traces, which here is both
#     faster and leaner);
#   * tracestat on the same JSON files and on the .gz files (all cores, and
#     the .gz files on one core: `--jobs 1`), then the summary against the
#     issue's targets: HTA's wall time over tracestat's (>= 200x),
#     tracestat's peak RSS over HTA's (<= 1/10), gzip input in MB/s of
#     uncompressed JSON per core (>= 300), beside `gzip -dc`'s; each
#     ratio against every HTA backend, and HTA's time over `cat`'s (the
#     ratio a program that only read the files once would reach);
#   * with --baseline, that other tracestat binary (e.g. main's, built
#     apart) on the same JSON files, and the ratio of the CPU times.
# HTA: a python with `holistictraceanalysis==0.5.0 psutil pyyaml "pandas<3" ijson`
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
baseline=""
hta_backends="json,ijson_batch_and_compress"
while [ $# -gt 0 ]; do
    case "$1" in
        --src) src="$2"; shift 2 ;;
        --ranks) ranks="$2"; shift 2 ;;
        --total-mb) total_mb="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --python) py="$2"; shift 2 ;;
        --skip-hta) skip_hta=1; shift ;;
        --baseline) baseline="$2"; shift 2 ;;
        --hta-backends) hta_backends="$2"; shift 2 ;;
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
    echo "$secs $rss_kb $rc $(awk -v u="$user" -v y="$sys" 'BEGIN { print u + y }')" > "$work/last"
    return 0
}

echo "uptime: $(uptime)"
echo "input: ${#files[@]} ranks, $((bytes / 1000000)) MB of JSON ($((gzbytes / 1000000)) MB gzipped) from $src ($(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg))"
run "floor: cat into a file" cat "${files[@]}"
read -r cat_secs _ _ _ < "$work/last"
run "floor: gzip -dc into a file" gzip -dc "${gzfiles[@]}"
read -r gzip_secs _ _ gzip_cpu < "$work/last"

# Per HTA backend: its wall seconds and peak RSS (KB) of its process tree.
declare -A hta_secs hta_rss
backends=()
if [ "$skip_hta" = 0 ]; then
    IFS=, read -r -a backends <<< "$hta_backends"
    for be in "${backends[@]}"; do
        run "HTA ($be)" "$py" "$repo/benches/kineto/hta_run.py" "$in" "$be"
        read -r secs rss rc _ < "$work/last"
        if [ "$rc" != 0 ]; then
            echo "HTA ($be) failed (exit $rc):"; tail -n 5 "$work/err.txt"
            continue
        fi
        sed 's/^/  /' "$work/out.txt"
        # HTA parses ranks in worker processes: compare against its tree peak.
        tree_mib=$(grep -o 'process tree [0-9]*' "$work/out.txt" | awk '{ print $3 }')
        if [ -n "$tree_mib" ] && [ $((tree_mib * 1024)) -gt "$rss" ]; then rss=$((tree_mib * 1024)); fi
        hta_secs[$be]=$secs hta_rss[$be]=$rss
    done
fi

# tracestat on the same traces: its time and its breakdown table (or its
# one-line error); the gzip files also on one core, for the per-core rate.
declare -A ts_secs ts_rss ts_cpu
for kind in json gz gz1; do
    case "$kind" in
        json) set -- "${files[@]}" ;;
        gz) set -- "${gzfiles[@]}" ;;
        gz1) set -- --jobs 1 "${gzfiles[@]}" ;;
    esac
    run "tracestat ($kind)" "$bin" "$@"
    read -r secs rss rc cpu < "$work/last"
    if [ "$rc" != 0 ]; then
        echo "  tracestat ($kind) failed (exit $rc): $(head -n 1 "$work/err.txt")"
        continue
    fi
    ts_secs[$kind]=$secs ts_rss[$kind]=$rss ts_cpu[$kind]=$cpu
    if [ "$kind" = json ]; then
        # Its breakdown table, to see what it made of the traces.
        awk '/^Where the time went/ { on = 1 } on && NF == 0 { exit } on' "$work/out.txt" | head -n 12 | sed 's/^/  /'
    fi
done

if [ -n "$baseline" ] && [ -n "${ts_cpu[json]:-}" ]; then
    run "baseline tracestat (json)" "$baseline" "${files[@]}"
    read -r base_secs _ _ base_cpu < "$work/last"
    awk -v a="$base_cpu" -v b="${ts_cpu[json]}" 'BEGIN {
        printf "  baseline %.2f CPU s, this build %.2f CPU s: %.2fx fewer\n", a, b, a / (b > 0 ? b : 0.01) }'
fi
echo "summary (same files; targets of the Kineto input, docs/benchmarks.md#kineto):"
for be in "${backends[@]}"; do
    [ -n "${hta_secs[$be]:-}" ] && [ -n "${ts_secs[json]:-}" ] || continue
    awk -v be="$be" -v a="${hta_secs[$be]}" -v b="${ts_secs[json]}" -v m="${hta_rss[$be]}" -v n="${ts_rss[json]}" -v c="$cat_secs" 'BEGIN {
        printf "  HTA (%s): wall %.2f s, tracestat %.3f s: HTA takes %.0fx as long (target >= 200x); cat of the files %.3f s: %.0fx\n", be, a, b, a / (b > 0 ? b : 0.001), c, a / (c > 0 ? c : 0.001)
        printf "  HTA (%s): peak RSS %.1f MB, tracestat %.1f MB: %.3f of HTA'"'"'s (target <= 0.10)\n", be, m / 1024, n / 1024, n / (m > 0 ? m : 1) }'
done
if [ -n "${ts_secs[gz1]:-}" ]; then
    awk -v b="$bytes" -v s="${ts_secs[gz1]}" -v c="${ts_cpu[gz1]}" -v gs="$gzip_secs" -v gc="$gzip_cpu" 'BEGIN {
        printf "  gzip input, one core: %.0f MB/s of uncompressed JSON (%.0f MB/s per CPU second; target >= 300); gzip -dc alone: %.0f MB/s (%.0f per CPU second)\n", b / 1e6 / s, b / 1e6 / c, b / 1e6 / gs, b / 1e6 / gc }'
fi
if [ -n "${ts_secs[gz]:-}" ]; then
    awk -v b="$bytes" -v s="${ts_secs[gz]}" -v c="${ts_cpu[gz]}" -v n="$(nproc)" 'BEGIN {
        printf "  gzip input, %d cores: %.0f MB/s of uncompressed JSON (%.0f MB/s per CPU second)\n", n, b / 1e6 / s, b / 1e6 / c }'
fi
echo "uptime: $(uptime)"
