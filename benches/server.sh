#!/usr/bin/env bash
# Benchmark of the chart server (`analyze -q`, docs/benchmarks.md#server): start-up indexing
# speed, time per chart request, peak RSS; with the original script given,
# the same requests against analyzeperfmetrics.py -q in the same run.
#
# usage: benches/server.sh [SIZE] [GEN] [ORIG_SCRIPT] [PYTHON]
#   SIZE         metric CSV size for the generator (default 200MB)
#   GEN          the unitrace-gen binary (default $UNITRACE_GEN, else the workspace's, built)
#   ORIG_SCRIPT  analyzeperfmetrics.py (optional, or $ORIG); it always
#                listens on port 8000, which must then be free
#   PYTHON       interpreter for the original (default python3, or $PYTHON)
# Needs curl. Requests are made for the first and the last instance of the
# file (the original re-reads the whole section with pandas per request).
set -euo pipefail
cd "$(dirname "$0")/.."
size="${1:-200MB}"
UNITRACE_GEN="${2:-${UNITRACE_GEN:-}}"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
orig="${3:-${ORIG:-}}"
python="${4:-${PYTHON:-python3}}"
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

csv="$work/bench.metrics.csv"
echo "generating a $size metric CSV..." >&2
unitrace_gen metrics --size "$size" --quiet "$csv"
bytes=$(stat -c %s "$csv")
opts="$work/options.txt"
cat > "$opts" <<'EOF'
-m "XVE_ACTIVE[%],XVE_STALL[%]" -y "Percent"
-b "GPU_MEMORY_BYTE_READ[bytes],GPU_MEMORY_BYTE_WRITE[bytes]"
EOF
# The id follows the quoted kernel name (which may contain commas).
instance_id() { sed -n 's/^"[^"]*", *\([0-9][0-9]*\),.*/\1/p'; }
first_id=$(head -n 50 "$csv" | instance_id | head -n 1)
last_id=$(tail -n 50 "$csv" | instance_id | tail -n 1)

now() { date +%s.%N; }

# Starts a server in the background writing stdout to $1; waits for $2 in it.
wait_for() {
    local log="$1" pattern="$2" deadline=$((SECONDS + 600))
    until grep -q "$pattern" "$log" 2>/dev/null; do
        if [ $SECONDS -gt $deadline ]; then echo "server did not start" >&2; exit 1; fi
        sleep 0.05
    done
}

# Times one GET; prints seconds.
timed_get() {
    curl -s -o "$work/out.pdf" -w '%{time_total}' "$1"
}

echo "== analyze -q on $((bytes / 1000000)) MB ($bytes bytes), instances $first_id..$last_id"
log="$work/ours.log"
t0=$(now)
"$bin" -q --port 0 -f "$opts" "$csv" > "$log" 2>&1 &
ours=$!
pids+=("$ours")
wait_for "$log" "Serving charts on"
t1=$(now)
url=$(sed -n 's/^Serving charts on \(http[^ ]*\) .*/\1/p' "$log")
index_s=$(echo "$t1 - $t0" | bc -l)
printf 'start-up (index the file): %.2f s, %.0f MB/s\n' "$index_s" "$(echo "$bytes / 1000000 / $index_s" | bc -l)"
for id in "$first_id" "$last_id"; do
    t=$(timed_get "${url}%22k%22/$id")
    printf 'instance %s: %.3f s (%s bytes of PDF)\n' "$id" "$t" "$(stat -c %s "$work/out.pdf")"
done
ours_last=$(timed_get "${url}%22k%22/$last_id")
t0=$(now)
clients=()
for _ in $(seq 20); do
    curl -s -o /dev/null "${url}%22k%22/$last_id?format=html" &
    clients+=("$!")
done
wait "${clients[@]}"
t1=$(now)
printf '20 concurrent HTML requests: %.2f s\n' "$(echo "$t1 - $t0" | bc -l)"
rss_kb=$(awk '/VmHWM/{print $2}' "/proc/$ours/status")
printf 'peak RSS of the server: %.1f MB\n' "$(echo "$rss_kb / 1024" | bc -l)"
kill -INT "$ours"
wait "$ours" 2>/dev/null || true

if [ -n "$orig" ]; then
    echo "== original: $orig -q (port 8000)"
    log="$work/orig.log"
    t0=$(now)
    "$python" "$orig" -q -f "$opts" "$csv" > "$log" 2>&1 &
    theirs=$!
    pids+=("$theirs")
    # It prints its notices before scanning the file; wait for the port.
    until curl -s -o /dev/null "http://127.0.0.1:8000/%22k%22/x"; do
        if ! kill -0 "$theirs" 2>/dev/null; then cat "$log" >&2; exit 1; fi
        sleep 0.2
    done
    t1=$(now)
    printf 'start-up: %.2f s\n' "$(echo "$t1 - $t0" | bc -l)"
    orig_last=$(timed_get "http://127.0.0.1:8000/%22k%22/$last_id")
    printf 'instance %s: %.3f s\n' "$last_id" "$orig_last"
    rss_kb=$(awk '/VmHWM/{print $2}' "/proc/$theirs/status")
    printf 'peak RSS of the original: %.1f MB\n' "$(echo "$rss_kb / 1024" | bc -l)"
    # A background job of a non-interactive shell ignores SIGINT: TERM.
    kill -TERM "$theirs"
    wait "$theirs" 2>/dev/null || true
    printf 'ratio original/ours for one request: %.0fx\n' "$(echo "$orig_last / $ours_last" | bc -l)"
fi
