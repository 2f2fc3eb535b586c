#!/usr/bin/env bash
# Benchmark of the metric dashboard (docs/analyze.md#dashboard): start-up of
# the chart server (the one indexing pass, which now also gathers the
# index page's per-kernel statistics), time per request of `GET /`, of an
# instance page (`/perfdashboard?gid=N`), of its JSON ("compare with") and,
# in the same run, of the PDF of the same instance (the original's URL);
# peak RSS of the server.
#
# usage: benches/dashboard.sh [SIZE] [GEN]
#   SIZE  metric CSV size for the generator (default 1GB)
#   GEN   the unitrace-gen binary (default $UNITRACE_GEN, else the workspace's, built)
# With CSV=path an existing metric CSV is used instead of generating one.
# Needs curl.
set -euo pipefail
cd "$(dirname "$0")/.."
size="${1:-1GB}"
UNITRACE_GEN="${2:-${UNITRACE_GEN:-}}"
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

csv="${CSV:-}"
if [ -z "$csv" ]; then
    csv="$work/bench.metrics.csv"
    echo "generating a $size metric CSV..." >&2
    unitrace_gen metrics --size "$size" --quiet "$csv"
fi
sync
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
wait_for() {
    local log="$1" pattern="$2" deadline=$((SECONDS + 900))
    until grep -q "$pattern" "$log" 2>/dev/null; do
        if [ $SECONDS -gt $deadline ]; then echo "server did not start" >&2; exit 1; fi
        sleep 0.05
    done
}
# Mean milliseconds of N GETs of URL (the body is kept in $work/out).
mean_ms() {
    local url="$1" n="$2" total=0 t
    for _ in $(seq "$n"); do
        t=$(curl -s -o "$work/out" -w '%{time_total}' "$url")
        total=$(echo "$total + $t" | bc -l)
    done
    echo "$total * 1000 / $n" | bc -l
}
row() { printf '%-38s %9.1f ms  %10s bytes\n' "$1" "$2" "$(stat -c %s "$work/out")"; }

echo "== analyze -q on $((bytes / 1000000)) MB ($bytes bytes), instances $first_id..$last_id"
log="$work/server.log"
t0=$(now)
"$bin" -q --port 0 -f "$opts" "$csv" > "$log" 2>&1 &
server=$!
pids+=("$server")
wait_for "$log" "Serving charts on"
t1=$(now)
url=$(sed -n 's/^Serving charts on \(http[^ ]*\) .*/\1/p' "$log")
startup=$(echo "$t1 - $t0" | bc -l)
printf 'start-up (index + per-kernel statistics): %.2f s, %.0f MB/s\n' \
    "$startup" "$(echo "$bytes / 1000000 / $startup" | bc -l)"
row "GET / (index page)" "$(mean_ms "$url" 10)"
for id in "$first_id" "$last_id"; do
    row "GET /perfdashboard?gid=$id" "$(mean_ms "${url}perfdashboard?gid=$id" 10)"
    row "GET /perfdashboard?gid=$id&format=json" "$(mean_ms "${url}perfdashboard?gid=$id&format=json" 10)"
    row "GET /%22k%22/$id (PDF, original URL)" "$(mean_ms "${url}%22k%22/$id" 10)"
done
rss_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$server/status")
printf 'server peak RSS: %.1f MB\n' "$(echo "$rss_kb / 1024" | bc -l)"
