#!/usr/bin/env bash
# Builds the tools and runs the main jobs on the sample data bundled in
# testdata/, writing results under sample-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
cargo build --release --locked --workspace
bin="$CARGO_TARGET_DIR/release"
out="${SAMPLE_OUT:-sample-out}"
mkdir -p "$out"
echo "== analyze -l on a metric CSV" >&2
"$bin/analyze" -l testdata/sample/metrics.csv
echo "== analyze -l on a stall CSV" >&2
"$bin/analyze" -l testdata/sample/stalls.csv
echo "== roofline on a bundled compute/memory profile pair" >&2
"$bin/roofline" --compute testdata/roofline/gen_mixed_compute.txt --memory testdata/roofline/gen_mixed_memory.txt \
    --device pvc --output "$out/roofline.html" --data "$out/roofline.csv"
echo "== mergetrace: merge two rank traces, GPU-time stats" >&2
"$bin/mergetrace" -o "$out/merged.json" --stats "$out/merged-stats.csv" testdata/trace/two/*.json
echo "== analyze: charts of every instance with the pvc ComputeBasic preset (PDF + data)" >&2
"$bin/analyze" testdata/sample/metrics.csv -i 0 -f pvc/ComputeBasic.txt \
    -o "$out/metric-charts.pdf" --data "$out/metric-charts.csv"
echo "== analyze: stall charts + stall-to-source report from a bundled shader dump (dump left untouched)" >&2
"$bin/analyze" -s testdata/stall_report/src/dump -r "$out/stall-report.txt" \
    -o "$out/stall-charts.pdf" testdata/stall_report/src/stalls.csv
"$bin/analyze" -s testdata/stall_report/src/dump --by-line -r "$out/stall-by-line.txt" \
    -o "$out/stall-by-line.pdf" testdata/stall_report/src/stalls.csv
echo "== categorize schemas/LLaMA.ini (must equal schemas/LLaMA.json)" >&2
"$bin/categorize" --input schemas/LLaMA.ini --output "$out/LLaMA.json"
cmp "$out/LLaMA.json" schemas/LLaMA.json
echo "== summary of a 4-rank tarball with schemas/LLaMA.json" >&2
"$bin/summary" --input testdata/summary/plain.tgz --schema schemas/LLaMA.json \
    --output "$out/summary.json" --per-rank "$out/summary_ranks.csv" --format table
echo "== tracestat: where the time went across 4 ranks (console, HTML page, CSV and Parquet tables, events dataset)" >&2
"$bin/tracestat" testdata/tracestat/coll.200[0-3].*.json --tree=2 --html "$out/tracestat.html" \
    --json "$out/tracestat.json" --csv "$out/tracestat-csv" --parquet "$out/tracestat-parquet"
rm -rf "$out/events"
"$bin/tracestat" -q testdata/tracestat/coll.200[0-3].*.json --events "$out/events"
echo "== tracestat on a 4-GPU PyTorch profiler recording with planted problems: what to fix first" >&2
"$bin/tracestat" testdata/kineto/recorded/planted --findings --html "$out/tracestat-kineto.html"
echo "== compare: baseline vs candidate traces (console, HTML, rows as Parquet)" >&2
"$bin/compare" testdata/compare/base testdata/compare/cand --html "$out/compare.html" \
    --csv "$out/compare.parquet"
echo "== analyze --data as Parquet" >&2
"$bin/analyze" testdata/sample/metrics.csv -i 0 -f pvc/ComputeBasic.txt \
    -o "$out/metric-charts-2.pdf" --data "$out/metric-charts.parquet"
echo "== uniview: serve a trace to Perfetto on free ports, then Ctrl-C" >&2
uniview_log="$out/uniview.log"
# The log exists before the server starts: the background job's redirection
# may run after the first `grep` below, which must find a file to read.
: > "$uniview_log"
"$bin/uniview" -t testdata/tracestat/coll.2000.0.json --trace-port 0 --port 0 --no-browser > "$uniview_log" 2>&1 &
uniview_pid=$!
until grep -q "ui.perfetto.dev" "$uniview_log"; do
    kill -0 "$uniview_pid" 2>/dev/null || { echo "uniview did not start" >&2; cat "$uniview_log" >&2; exit 1; }
    sleep 0.1
done
kill -INT "$uniview_pid"
wait "$uniview_pid"
echo "== analyze -q: chart server on a free port, one instance page fetched as HTML, then Ctrl-C" >&2
server_log="$out/server.log"
: > "$server_log"
"$bin/analyze" -q --port 0 -f testdata/server/options.txt testdata/server/metrics3.csv > "$server_log" &
server_pid=$!
until grep -q "^Serving charts on" "$server_log"; do
    kill -0 "$server_pid" 2>/dev/null || { echo "analyze -q did not start" >&2; exit 1; }
    sleep 0.1
done
server_port=$(sed -n 's/^Serving charts on http:\/\/127.0.0.1:\([0-9]*\)\/.*/\1/p' "$server_log")
# A plain HTTP/1.1 GET through bash's /dev/tcp (no curl needed).
exec 3<>"/dev/tcp/127.0.0.1/$server_port"
printf 'GET /%%22k%%22/26?format=html HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
sed '1,/^\r$/d' <&3 > "$out/server-instance-26.html"
exec 3<&-
kill -INT "$server_pid"
wait "$server_pid"
