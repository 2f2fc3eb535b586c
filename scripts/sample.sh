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
echo "== categorize schemas/LLaMA.ini (must equal schemas/LLaMA.json)" >&2
"$bin/categorize" --input schemas/LLaMA.ini --output "$out/LLaMA.json"
cmp "$out/LLaMA.json" schemas/LLaMA.json
echo "== summary of a 4-rank tarball with schemas/LLaMA.json" >&2
"$bin/summary" --input testdata/summary/plain.tgz --schema schemas/LLaMA.json \
    --output "$out/summary.json" --per-rank "$out/summary_ranks.csv" --format table
