#!/usr/bin/env bash
# Benchmark of the stall-to-source report (`analyze -s DUMP -r report.txt`).
#
#   benches/stall_report.sh [--gen UNITRACE_GEN] [--orig ANALYZEPERFMETRICS.PY] [--python PY]
#                           [--work DIR] [--big-instructions N] [--big-kernels K]
#
# 1. The generator's default stall case (6 kernels x ~160 instructions, with a
#    shader dump): ours and, when --orig is given, the original script on a
#    copy of the dump, in the same run; prints both times and the ratio.
# 2. One kernel of N (default 100000) instructions, every instruction sampled,
#    report with -n -1 (every stalled instruction walked) and with -n 10.
# 3. A stall CSV of K x N rows (default 10 x 100000 = 1M rows), K kernels.
# Cases 2 and 3 are ours alone. Their inputs are synthesised by a small
# stdlib-only Python helper below: one unannotated kernel of blocks with
# loops and waits that no setter resolves inside cycles (the original loops
# forever on those, so unitrace-gen's dumps never contain them; our report
# must stay linear on them).
#
# Prints wall time, peak RSS (from /usr/bin/time -v) and input sizes. The
# "charts-only" lines (no -s) show how much of a run is the chart PDF itself
# (every 100 stalled instructions make one chart page, and the report text
# pages follow them in the PDF).
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
. "$(dirname "${BASH_SOURCE[0]}")/../scripts/unitrace_gen.sh"
orig="${ORIG:-}"
python="${PYTHON:-python3}"
work="${WORK:-$(mktemp -d /tmp/stall-bench.XXXXXX)}"
big_n=100000
big_k=10
while [ $# -gt 0 ]; do
    case "$1" in
        --gen) UNITRACE_GEN="$2"; shift 2 ;;
        --orig) orig="$2"; shift 2 ;;
        --python) python="$2"; shift 2 ;;
        --work) work="$2"; shift 2 ;;
        --big-instructions) big_n="$2"; shift 2 ;;
        --big-kernels) big_k="$2"; shift 2 ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$work"

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools-target}"
(cd "$here" && cargo build --release --locked -q -p analyze)
analyze="$CARGO_TARGET_DIR/release/analyze"

# measure LABEL DIR CMD...: runs CMD in DIR, prints wall seconds and peak RSS.
measure() {
    local label="$1" dir="$2"; shift 2
    local log="$work/time.$$.log"
    (cd "$dir" && /usr/bin/time -v "$@" >"$work/$label.stdout" 2>"$log") || {
        echo "$label failed:"; tail -5 "$log"; return 1; }
    local wall rss
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log" |
        awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
    printf '%-34s %9.2f s  %8.1f MB peak RSS\n' "$label" "$wall" "$(echo "$rss / 1024" | bc -l)"
    echo "$wall" >"$work/$label.seconds"
}

echo "== 1. generator default stall case (ours vs original)"
rm -rf "$work/default" && mkdir -p "$work/default"
(cd "$work/default" && unitrace_gen stalls stalls.csv --dump dump --quiet)
cp -r "$work/default/dump" "$work/default/dump_orig"
echo "input: $(wc -c <"$work/default/stalls.csv") bytes CSV, $(ls "$work/default/dump" | grep -c '\.asm$') .asm files"
measure ours-default "$work/default" "$analyze" -s dump -r ours.txt -o ours.pdf stalls.csv
if [ -n "$orig" ]; then
    mkdir -p "$work/default/o" && mv "$work/default/dump_orig" "$work/default/o/dump"
    cp "$work/default/stalls.csv" "$work/default/o/"
    measure original-default "$work/default/o" "$python" "$orig" -s dump -r orig.txt -o orig.pdf stalls.csv
    printf 'ratio original/ours: %.1fx\n' \
        "$(echo "$(cat "$work/original-default.seconds") / $(cat "$work/ours-default.seconds")" | bc -l)"
    sed 's#dump/\(.*\)\.asm\.ip$#dump/\1.asm#' "$work/default/o/orig.txt" >"$work/default/orig.norm.txt"
    if cmp -s "$work/default/ours.txt" "$work/default/orig.norm.txt"; then
        echo "reports identical"
    else
        echo "reports differ in $(diff "$work/default/ours.txt" "$work/default/orig.norm.txt" | grep -c '^<') lines (tie order, docs/compatibility.md#analyze-quirk-13)"
    fi
fi

# synth DIR KERNELS INSTRUCTIONS: a dump with one unannotated .asm per kernel
# (blocks of 24 instructions, loops, loads allocating SBIDs, waits on tokens
# set in earlier blocks, some unresolvable waits inside cycles) and a stall
# CSV with one row per instruction.
synth() {
    "$python" - "$@" <<'EOF'
import os, random, sys
out, kernels, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(1)
os.makedirs(os.path.join(out, "dump"), exist_ok=True)
names = []
rows = []
for k in range(kernels):
    disc = "" if k == 0 else str(k - 1)
    symbol = "_ZTSZ4mainEUlT_E%s_" % disc
    names.append("main::{lambda(auto:1)#%d}" % (k + 1))
    lines = ["//.kernel " + symbol, "//.platform PVCXT", ""]
    addr, block, line_no, ips = 0, 0, 10, []
    i = 0
    while i < n:
        preds = [] if block == 0 else ["B%03d" % (block - 1)]
        if block % 7 == 3:
            preds.append("B%03d" % block)  # self loop
        if block % 11 == 5 and block > 4:
            preds.append("B%03d" % (block + 1))  # back edge from the next block
        succs = ["B%03d" % (block + 1)]
        lines.append("// B%03d: Preds:{%s},  Succs:{%s}" % (block, ", ".join(preds), ", ".join(succs)))
        if block % 10 == 0:
            lines += ["", "// File: /src/kernel%d.cpp" % k]
        for j in range(24):
            if i >= n:
                break
            if j % 6 == 0:
                line_no += 1
                lines += ["", "// Line %d:  c[i] = a[i] * b[i] + %d;" % (line_no, j)]
            tok = (block * 3 + j) % 16
            kind = j % 6
            if kind == 0:
                text = "(W)     load.ugm.d32.a64 (32|M0)  r%d:2  [r12:4]   {I@1,$%d} // ex_desc:0x0; desc:0x8200580 // $%d" % (j, tok, i)
            elif kind == 1:
                text = "        sync.nop null {Compacted,$%d.dst} // $%d" % ((tok + 13) % 16, i)
            elif kind == 2:
                text = "        add (32|M0)  r24.0<1>:f  r18.0<1;1,0>:f  r22.0<1;1,0>:f  {$%d.dst} // $%d" % ((tok + 7) % 16, i)
            elif kind == 3 and block % 7 == 3:
                text = "        mul (32|M0)  r30.0<1>:f  r18.0<1;1,0>:f  r22.0<1;1,0>:f  {$40.dst} // unresolvable $%d" % i
            elif kind == 4:
                text = "        sync.allrd ($%d,$%d) // $%d" % (tok, (tok + 1) % 16, i)
            else:
                text = "        mov (32|M0)  r40.0<1>:f  r24.0<1;1,0>:f {A@1} // $%d" % i
            lines.append(text)
            ips.append(addr)
            addr += 8 if "Compacted" in text else 16
            i += 1
        block += 1
    with open(os.path.join(out, "dump", "OCL_asm%016x_simd32_entry_%04d.asm" % (k + 1, k + 1)), "w") as f:
        f.write("\n".join(lines) + "\n")
    for ip in ips:
        c = [rng.choice((0, 0, 0, 1, 2, 5)) for _ in range(8)]
        c[4] = rng.choice((0, 3, 17, 250))
        rows.append((names[k], ip, c))
width = max(len(x) for x in names) + 2
cols = ["ControlStall[Events]", "PipeStall[Events]", "SendStall[Events]", "DistStall[Events]",
        "SbidStall[Events]", "SyncStall[Events]", "InstrFetchStall[Events]", "OtherStall[Events]"]
with open(os.path.join(out, "stalls.csv"), "w") as f:
    f.write("\n=== Device #0 Metrics ===\n\n")
    f.write("Kernel".rjust(width) + ", " + "IP[Address]" + ", Active[Events], " + ", ".join(cols) + "\n")
    for name, ip, c in rows:
        f.write(('"%s"' % name).rjust(width) + ", " + ("%x" % ip).rjust(11) + ", " + "5".rjust(14) + ", "
                + ", ".join(str(v).rjust(len(col)) for v, col in zip(c, cols)) + "\n")
EOF
}

echo "== 2. one kernel of $big_n instructions (ours)"
rm -rf "$work/big1" && synth "$work/big1" 1 "$big_n"
echo "input: $(wc -l <"$work/big1/stalls.csv") CSV lines, $(du -sh "$work/big1/dump" | cut -f1) dump"
measure "ours-${big_n}ins-charts-only" "$work/big1" "$analyze" -o c0.pdf stalls.csv
measure "ours-${big_n}ins-n10" "$work/big1" "$analyze" -s dump -r r10.txt -o c10.pdf stalls.csv
measure "ours-${big_n}ins-unlimited" "$work/big1" "$analyze" -s dump -n -1 -r rall.txt -o call.pdf stalls.csv
echo "report entries (-n -1): $(grep -c '^Instruction$' "$work/big1/rall.txt")"

echo "== 3. $big_k kernels x $big_n rows (ours)"
rm -rf "$work/bigk" && synth "$work/bigk" "$big_k" "$big_n"
echo "input: $(wc -l <"$work/bigk/stalls.csv") CSV lines ($(du -h "$work/bigk/stalls.csv" | cut -f1)), $(du -sh "$work/bigk/dump" | cut -f1) dump"
measure "ours-$((big_k * big_n))rows-charts-only" "$work/bigk" "$analyze" -o c0.pdf stalls.csv
measure "ours-$((big_k * big_n))rows-n10" "$work/bigk" "$analyze" -s dump -r r.txt -o c.pdf stalls.csv
measure "ours-$((big_k * big_n))rows-by-line" "$work/bigk" "$analyze" -s dump --by-line -r l.txt -o l.pdf stalls.csv
echo "work dir: $work"
