#!/usr/bin/env bash
# Speed and memory of `roofline` on large generated profiles.
#
#   benches/roofline.sh [GEN] [ORIG]
#     GEN   the unitrace-gen binary (default $UNITRACE_GEN, else the workspace's, built)
#     ORIG  roofline.py of the original scripts (optional; $ORIG); run with
#           $PYTHON (default python3) in the same run for the ratio
#   KERNELS (default 40) and INSTANCES (default 1000) size the input.
#
# Prints MB/s over both input files, peak RSS, and the ratio to the
# original when it is given.
set -euo pipefail
cd "$(dirname "$0")/.."
UNITRACE_GEN="${1:-${UNITRACE_GEN:-}}"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
ORIG="${2:-${ORIG:-}}"
PYTHON="${PYTHON:-python3}"
KERNELS="${KERNELS:-40}"
INSTANCES="${INSTANCES:-1000}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
cargo build --release --locked -p roofline >&2
bin="$CARGO_TARGET_DIR/release/roofline"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
unitrace_gen --seed 4 roofline --quiet --kernels "$KERNELS" --instances "$INSTANCES" \
    --compute "$work/c.txt" --memory "$work/m.txt"
bytes=$(( $(stat -c %s "$work/c.txt") + $(stat -c %s "$work/m.txt") ))
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
echo "input: $KERNELS kernels x $INSTANCES instances, $mb MB (both files)"

measure() { # label, command...
    local label=$1; shift
    /usr/bin/time -v -o "$work/time.txt" "$@" >"$work/stdout.txt" 2>"$work/stderr.txt" || {
        echo "$label failed:"; tail -3 "$work/stderr.txt"; return 1; }
    local secs rss cpu
    secs=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$work/time.txt")
    cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { print s }' "$work/time.txt")
    echo "$label: ${secs}s wall ($(awk -v b="$bytes" -v s="$secs" 'BEGIN { printf "%.1f", (s > 0 ? b / 1e6 / s : 0) }') MB/s), ${cpu}s CPU ($(awk -v b="$bytes" -v s="$cpu" 'BEGIN { printf "%.1f", (s > 0 ? b / 1e6 / s : 0) }') MB/s), peak RSS ${rss} MB"
    echo "$secs" >"$work/$label.secs"
}

measure ours "$bin" --compute "$work/c.txt" --memory "$work/m.txt" \
    --device device_configs/pvc.json --output "$work/r.html"
if [ -n "$ORIG" ]; then
    cp "$work/stdout.txt" "$work/ours.stdout"
    dev="$(dirname "$ORIG")/device_configs/PVC_1tile.csv"
    (cd "$work" && measure original "$PYTHON" "$ORIG" --compute c.txt --memory m.txt --device "$dev" --output orig)
    if cmp -s "$work/ours.stdout" "$work/stdout.txt"; then echo "stdout: identical"; else echo "stdout: DIFFERS"; fi
    awk -v a="$(cat "$work/original.secs")" -v b="$(cat "$work/ours.secs")" \
        'BEGIN { if (b > 0) printf "speed-up: %.1fx\n", a / b }'
fi
