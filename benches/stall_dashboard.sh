#!/usr/bin/env bash
# Benchmark of the stall dashboard (docs/analyze.md#stall-dashboard): the
# chart server on a stall CSV with its shader dump (start-up, `GET /`, a
# kernel page with its assembly, the original PDF answer of a link), peak
# RSS, and `analyze -s DUMP -o x.html` against `-o x.pdf` (the original's
# output, same runs and reports) and `analyze -l` (one parsing pass, the
# floor) in the same run.
#
# usage: benches/stall_dashboard.sh [KERNELS] [INSTRUCTIONS] [GEN]
#   KERNELS       sampled kernels (default 50)
#   INSTRUCTIONS  instructions per kernel (default 2000)
#   GEN           the unitrace-gen binary (default $UNITRACE_GEN, else the workspace's, built)
# Needs curl and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
kernels="${1:-50}"
instructions="${2:-2000}"
UNITRACE_GEN="${3:-${UNITRACE_GEN:-}}"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
cargo build --release --locked -p analyze >&2
bin="$CARGO_TARGET_DIR/release/analyze"

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

csv="$work/stalls.csv"
dump="$work/dump"
echo "generating a stall CSV of $kernels kernels x $instructions instructions..." >&2
unitrace_gen --seed 5 stalls "$csv" --dump "$dump" --kernels "$kernels" \
    --instructions "$instructions" --quiet
bytes=$(stat -c %s "$csv")
rows=$(grep -c '^ *"' "$csv" || true)
# The hottest kernel of the file: a name from the middle of the file.
kernel=$(grep '^ *"' "$csv" | sed -n "$((rows / 2))p" | sed 's/^ *"\([^"]*\)".*/\1/')
enc=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$kernel")

now() { date +%s.%N; }
wait_for() {
    local log="$1" pattern="$2" deadline=$((SECONDS + 600))
    until grep -q "$pattern" "$log" 2>/dev/null; do
        if [ $SECONDS -gt $deadline ]; then echo "server did not start" >&2; exit 1; fi
        sleep 0.05
    done
}
timed_get() {
    curl -s -o "$work/out" -w '%{time_total}' "$1"
}
# Seconds and peak RSS (MB) of a command: "S MB".
measure() {
    /usr/bin/time -f '%e %M' -o "$work/time" "$@" > /dev/null 2>&1
    awk '{printf "%.2f %.1f", $1, $2 / 1024}' "$work/time"
}

echo "== $((bytes / 1000000)) MB stall CSV ($bytes bytes, $rows rows, $kernels kernels)"
sync
log="$work/server.log"
t0=$(now)
"$bin" -q --port 0 -s "$dump" "$csv" > "$log" 2>&1 &
server=$!
pids+=("$server")
wait_for "$log" "Serving charts on"
t1=$(now)
url=$(sed -n 's/^Serving charts on \(http[^ ]*\) .*/\1/p' "$log")
start_s=$(echo "$t1 - $t0" | bc -l)
printf 'server start-up (index + stall totals): %.2f s, %.0f MB/s\n' "$start_s" \
    "$(echo "$bytes / 1000000 / $start_s" | bc -l)"
t=$(timed_get "$url")
printf 'GET / (dashboard): %.3f s, %s bytes\n' "$t" "$(stat -c %s "$work/out")"
t=$(timed_get "${url}perfdashboard?kernel=$enc")
printf 'kernel page with its assembly (first request, .asm read): %.3f s, %s bytes\n' "$t" "$(stat -c %s "$work/out")"
t=$(timed_get "${url}perfdashboard?kernel=$enc")
printf 'kernel page again: %.3f s\n' "$t"
t=$(timed_get "${url}%22$enc%22/1")
printf 'PDF of the link (original answer): %.3f s\n' "$t"
rss_kb=$(awk '/VmHWM/{print $2}' "/proc/$server/status")
printf 'peak RSS of the server: %.1f MB\n' "$(echo "$rss_kb / 1024" | bc -l)"
kill -INT "$server"
wait "$server" 2>/dev/null || true

read -r html_s html_mb <<< "$(measure "$bin" -s "$dump" -o "$work/s.html" "$csv")"
read -r pdf_s pdf_mb <<< "$(measure "$bin" -s "$dump" -o "$work/s.pdf" "$csv")"
read -r list_s list_mb <<< "$(measure "$bin" -l "$csv")"
printf 'analyze -s DUMP -o x.html: %s s, %s MB RSS, %s bytes\n' "$html_s" "$html_mb" "$(stat -c %s "$work/s.html")"
printf 'analyze -s DUMP -o x.pdf:  %s s, %s MB RSS\n' "$pdf_s" "$pdf_mb"
printf 'analyze -l (floor):        %s s, %s MB RSS\n' "$list_s" "$list_mb"
printf 'ratio html/pdf: %.2fx\n' "$(echo "$html_s / ($pdf_s + 0.001)" | bc -l)"
