#!/usr/bin/env bash
# Benchmark of `tracestat --events` (docs/tracestat.md#events, docs/sql.md):
# the trace exported as a Parquet dataset, with the floor, the report and
# DuckDB measured in the same run.
#
#   benches/tracestat_events.sh [--gen UNITRACE_GEN] [--python PY] [--ranks N] [--size SIZE]
#                               [--seed S] [--work DIR] [--repeat R] [--formats json,pftrace]
#                               [--baseline TRACESTAT]
#
# Generates N per-rank traces of SIZE each (default 8 x 500MB) with
# the repository's generator
# (`unitrace-gen`, docs/unitrace-gen.md: the workspace's, built, or
# $UNITRACE_GEN / --gen), as JSON and as .pftrace (same seed), warms the page cache, then
# prints for each run wall seconds, MB/s of input, CPU seconds, MB per CPU
# second and peak RSS (/usr/bin/time -v's maximum resident set):
#   * the floor: `cat` of the inputs into a file;
#   * the export of the JSON traces on one core (taskset -c 0, --jobs 1) and
#     on two (taskset -c 0,1, --jobs 2), the ratio, and the one-core time
#     over the floor's;
#   * with --baseline, that other tracestat binary (e.g. main's, built
#     apart) exporting on one core, and the ratio of the CPU times;
#   * the same for the .pftrace traces;
#   * a re-run over the complete dataset (every rank skipped);
#   * the dataset's size against the JSON's;
#   * DuckDB's top-kernels query of docs/sql.md over the dataset (the
#     query alone and the whole python3 process) against tracestat's run
#     that makes the same table (`-q --csv`, all cores).
# --formats picks the inputs (default both). The best of R runs (default 2) is kept: the machine may be shared. Needs
# the Python package duckdb (pip install --user duckdb).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
py="${PYTHON:-python3}"
ranks=8
size=500MB
repeat=2
seed=0
work=""
formats="json,pftrace"
baseline=""
while [ $# -gt 0 ]; do
    case "$1" in
        --gen) UNITRACE_GEN="$2"; shift 2 ;;
        --python) py="$2"; shift 2 ;;
        --ranks) ranks="$2"; shift 2 ;;
        --size) size="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        --formats) formats="$2"; shift 2 ;;
        --baseline) baseline="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$work" ]; then
    work="$(mktemp -d "${TMPDIR:-/tmp}/tracestat-events-bench.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
"$py" -c 'import duckdb' 2>/dev/null || { echo "needs the Python package duckdb: pip install --user duckdb" >&2; exit 2; }

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
(cd "$repo" && cargo build --release --locked -p tracestat >&2)
bin="$CARGO_TARGET_DIR/release/tracestat"

# gen FORMAT: the N traces of SIZE in that format (kept in --work).
gen_traces() {
    local dir="$work/in-$ranks-$size-seed$seed-$1"
    if [ ! -d "$dir" ]; then
        echo "generating $ranks $1 traces of $size in $dir" >&2
        unitrace_gen --seed "$seed" trace "$dir.tmp" --ranks "$ranks" --size "$size" --format "$1" -q
        mv "$dir.tmp" "$dir"
    fi
    echo "$dir"
}

# run LABEL BYTES CMD... : runs CMD $repeat times, keeps the fastest, prints
# wall seconds, MB/s, CPU seconds, MB per CPU second and peak RSS.
run() {
    local label="$1" bytes="$2"; shift 2
    local t="$work/time.txt" best="" i
    for ((i = 0; i < repeat; i++)); do
        /usr/bin/time -f "%e %U %S %M" -o "$t" "$@" > /dev/null
        if [ -z "$best" ] || awk -v a="$(cut -d' ' -f1 "$t")" -v b="$(cut -d' ' -f1 <<< "$best")" 'BEGIN { exit !(a < b) }'; then
            best="$(cat "$t")"
        fi
    done
    read -r secs user sys rss_kb <<< "$best"
    awk -v l="$label" -v s="$secs" -v u="$user" -v y="$sys" -v b="$bytes" -v r="$rss_kb" \
        'BEGIN { c = u + y; printf "%-42s %7.2f s %7.1f MB/s | cpu %7.2f s %7.1f MB/cpu-s | %7.1f MB peak RSS\n", l, s, b / 1e6 / (s > 0 ? s : 0.01), c, b / 1e6 / (c > 0 ? c : 0.01), r / 1024 }'
    awk -v s="$secs" -v r="$rss_kb" -v u="$user" -v y="$sys" 'BEGIN { print s, r, u + y }' > "$work/last"
}

# export_runs FORMAT: the export on 1 and 2 cores (a fresh dataset each
# time), the ratio, and the targets.
export_runs() {
    local dir files bytes one two rss1 rss2 out="$work/events-$1"
    dir="$(gen_traces "$1")"
    mapfile -t files < <(ls "$dir"/*."$1" | sort -t. -k3,3n)
    bytes=$(cat "${files[@]}" | wc -c)
    sync
    cat "${files[@]}" > /dev/null
    echo "input: ${#files[@]} $1 files, $((bytes / 1000000)) MB"
    run "floor: cat > file" "$bytes" bash -c 'cat "$@" > "$0"' "$work/cat.out" "${files[@]}"
    read -r floor _ < "$work/last"
    rm -f "$work/cat.out"
    run "tracestat --events, $1 (1 core)" "$bytes" \
        bash -c 'rm -rf "$1" && shift && exec "$@"' _ "$out" taskset -c 0 "$bin" -q --jobs 1 --events "$out" "${files[@]}"
    read -r one rss1 one_cpu < "$work/last"
    awk -v a="$one" -v f="$floor" -v fm="$1" 'BEGIN { printf "%s: 1 core takes %.2fx the floor'"'"'s time\n", fm, a / (f > 0 ? f : 0.01) }'
    if [ -n "$baseline" ]; then
        run "baseline --events, $1 (1 core)" "$bytes" \
            bash -c 'rm -rf "$1" && shift && exec "$@"' _ "$out" taskset -c 0 "$baseline" -q --jobs 1 --events "$out" "${files[@]}"
        read -r _ _ base_cpu < "$work/last"
        awk -v a="$base_cpu" -v b="$one_cpu" -v fm="$1" 'BEGIN {
            printf "%s: baseline %.2f CPU s, this build %.2f CPU s: %.2fx fewer\n", fm, a, b, a / (b > 0 ? b : 0.01) }'
    fi
    run "tracestat --events, $1 (2 cores)" "$bytes" \
        bash -c 'rm -rf "$1" && shift && exec "$@"' _ "$out" taskset -c 0,1 "$bin" -q --jobs 2 --events "$out" "${files[@]}"
    read -r two rss2 _ < "$work/last"
    run "re-run over the complete dataset" "$bytes" "$bin" -q --events "$out" "${files[@]}"
    awk -v a="$one" -v b="$two" -v by="$bytes" -v r1="$rss1" -v r2="$rss2" 'BEGIN {
        printf "2 cores vs 1: %.2fx (target >= 1.8x); 1 core: %.0f MB/s (target >= 300); peak RSS %.0f / %.0f MB (target < 300)\n",
            a / (b > 0 ? b : 0.01), by / 1e6 / (a > 0 ? a : 0.01), r1 / 1024, r2 / 1024 }'
    local ds
    ds=$(du -sb "$out" | cut -f1)
    awk -v d="$ds" -v b="$bytes" -v f="$1" 'BEGIN { printf "dataset: %.1f MB for %.1f MB of %s (%.1fx smaller)\n", d / 1e6, b / 1e6, f, b / (d > 0 ? d : 1) }'
    echo "$out" > "$work/dataset-$1"
    printf '%s\n' "${files[@]}" > "$work/files-$1"
}

echo "$(nproc) cores; $(uptime)"
for f in ${formats//,/ }; do export_runs "$f"; done
[ -s "$work/dataset-json" ] || { echo "done (no JSON run, no DuckDB comparison); $(uptime)"; exit; }

# DuckDB's top kernels (docs/sql.md) against tracestat making the same table.
out="$(cat "$work/dataset-json")"
mapfile -t files < "$work/files-json"
bytes=$(cat "${files[@]}" | wc -c)
query="$(awk '/<!-- query: top_kernels -->/ { on = 1; next } on && /^```sql/ { inside = 1; next } inside && /^```/ { exit } inside { print }' "$repo/docs/sql.md")"
cat > "$work/duck.py" <<'EOF'
import sys, time
import duckdb
dataset, query = sys.argv[1], sys.argv[2]
con = duckdb.connect()
con.sql("CREATE VIEW events AS SELECT * FROM read_parquet('%s/*/*.parquet', hive_partitioning = true)" % dataset)
t = time.perf_counter()
rows = con.sql(query).fetchall()
print("duckdb top-kernels query alone: %.3f s (%d rows)" % (time.perf_counter() - t, len(rows)), file=sys.stderr)
EOF
run "duckdb top kernels (python3 process)" "$bytes" "$py" "$work/duck.py" "$out" "$query"
run "tracestat -q --csv (same table, all cores)" "$bytes" "$bin" -q --csv "$work/csv" "${files[@]}"
echo "(MB/s of the last two rows: of the JSON input the table describes)"
echo "done; $(uptime)"
