#!/usr/bin/env bash
# Builds the tools and runs the main jobs on the sample data bundled in
# testdata/, writing results under sample-out/.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
cargo build --release --locked --workspace
bin="$CARGO_TARGET_DIR/release"
out=sample-out
mkdir -p "$out"
echo "== analyze -l on a metric CSV" >&2
"$bin/analyze" -l testdata/sample/metrics.csv
echo "== analyze -l on a stall CSV" >&2
"$bin/analyze" -l testdata/sample/stalls.csv
echo "== analyze: charts of every instance with the pvc ComputeBasic preset (PDF + data)" >&2
"$bin/analyze" testdata/sample/metrics.csv -i 0 -f pvc/ComputeBasic.txt \
    -o "$out/metric-charts.pdf" --data "$out/metric-charts.csv"
