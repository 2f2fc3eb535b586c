#!/usr/bin/env bash
# tracestat over many ranks on a Slurm cluster (docs/tracestat.md#past-one-machine):
# one array task per block of ranks writes a partial, one dependent job
# combines them into the report. With --events, the tasks write the events
# dataset instead (docs/sql.md): each task the rank partitions of its block.
#
#   scripts/tracestat-slurm.sh [--block N] [--sbatch "OPTS"] [--local] [--events DIR] OUT_DIR TRACE... [-- TRACESTAT_OPTS]
#
#   --block N       trace files per array task (default 64)
#   --events DIR    export mode: every task writes DIR/rank=N/ for its ranks
#                   (tracestat --events), no combine job. Resumable: submit
#                   the same command again after a failure or a time-out and
#                   the ranks already complete (DIR/rank=N/_SUCCESS) are
#                   skipped, the others redone.
#   --sbatch OPTS   extra sbatch options for every job (account, partition, time, ...)
#   --local         run the tasks and the combine here, one after the other
#                   (no Slurm; for a check on a laptop)
#   TRACESTAT_OPTS  options of the per-rank step (--schema, --short-kernel,
#                   --tree, --ranks): every partial must be made with the same.
#
# Writes OUT_DIR/files.txt (the trace list), OUT_DIR/part.<task>.json, then
# OUT_DIR/report.json, OUT_DIR/csv/ and OUT_DIR/report.html; with --events,
# OUT_DIR/files.txt, the task logs and the dataset in DIR.
# tracestat must be on PATH (or set TRACESTAT=/path/to/tracestat).
# Internal modes (used by the jobs it submits): --task OUT_DIR, --combine OUT_DIR.
set -euo pipefail
tracestat="${TRACESTAT:-tracestat}"
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"

case "${1:-}" in
    --task)
        out="$2"
        task="${SLURM_ARRAY_TASK_ID:?--task runs inside a Slurm array}"
        block=$(cat "$out/block")
        mapfile -t opts < "$out/opts.txt"
        mapfile -t files < <(sed -n "$((task * block + 1)),$(((task + 1) * block))p" "$out/files.txt")
        if [ -s "$out/events" ]; then
            exec "$tracestat" --events "$(cat "$out/events")" "${opts[@]}" "${files[@]}"
        fi
        exec "$tracestat" --partial "$out/part.$task.json" "${opts[@]}" "${files[@]}"
        ;;
    --combine)
        out="$2"
        exec "$tracestat" --combine --json "$out/report.json" --csv "$out/csv" --html "$out/report.html" \
            "$out"/part.*.json
        ;;
esac

block=64
sbatch_opts=""
local_run=0
events=""
while [ $# -gt 0 ]; do
    case "$1" in
        --events) events="$2"; shift 2 ;;
        --block) block="$2"; shift 2 ;;
        --sbatch) sbatch_opts="$2"; shift 2 ;;
        --local) local_run=1; shift ;;
        *) break ;;
    esac
done
[ $# -ge 2 ] || { sed -n '2,26p' "$0" >&2; exit 2; }
out="$1"; shift
files=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do files+=("$(realpath "$1")"); shift; done
[ "${1:-}" = "--" ] && shift
mkdir -p "$out"
out="$(realpath "$out")"
printf '%s\n' "${files[@]}" > "$out/files.txt"
printf '%s\n' "$@" > "$out/opts.txt"
[ $# -gt 0 ] || : > "$out/opts.txt"
echo "$block" > "$out/block"
if [ -n "$events" ]; then
    mkdir -p "$events"
    realpath "$events" > "$out/events"
else
    : > "$out/events"
    rm -f "$out"/part.*.json
fi
tasks=$(((${#files[@]} + block - 1) / block))

if [ "$local_run" = 1 ]; then
    for ((t = 0; t < tasks; t++)); do
        SLURM_ARRAY_TASK_ID=$t "$self" --task "$out"
    done
    [ -n "$events" ] || "$self" --combine "$out"
    exit
fi
# shellcheck disable=SC2086
array=$(sbatch --parsable $sbatch_opts --job-name=tracestat-part --array=0-$((tasks - 1)) \
    --output="$out/part.%a.log" "$self" --task "$out")
if [ -n "$events" ]; then
    echo "submitted $tasks export tasks ($array); dataset in $(cat "$out/events")" >&2
    exit
fi
# shellcheck disable=SC2086
sbatch --parsable $sbatch_opts --job-name=tracestat-combine --dependency=afterok:"$array" \
    --output="$out/combine.log" "$self" --combine "$out"
echo "submitted $tasks tasks ($array) and the combine step; report in $out" >&2
