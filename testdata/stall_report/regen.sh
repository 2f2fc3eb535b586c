#!/usr/bin/env bash
# Regenerates the ORIGINAL's reports and messages (*.orig.txt) under
# testdata/stall_report/, and the unitrace-gen inputs of `ugen/`. Not run by
# the tests.
#   UNITRACE_SCRIPTS=/path/to/pti-gpu/tools/unitrace/scripts \
#   [REGEN_INPUTS=1] PYTHON=/path/to/python-with-pandas testdata/stall_report/regen.sh
# (The inputs of src/, nosrc/ and raw/ were written by an earlier generator
# with the options below; they are kept unless REGEN_INPUTS=1, which
# rewrites them with unitrace-gen and the same options.)
# (see testdata/regen_env.sh; the original demangles with c++filt, GNU
# binutils 2.40 for the committed files). report.fixed.txt is written by
# hand (see README.md) and not touched.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../regen_env.sh"
require UNITRACE_SCRIPTS
orig="$UNITRACE_SCRIPTS/metrics/analyzeperfmetrics.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ugen DIR GENERATOR-ARGS...: stalls.csv and dump/ of one case.
ugen() {
    local dir="$here/$1"; shift
    mkdir -p "$dir"
    rm -rf "$dir/dump" "$dir/stalls.csv"
    (cd "$dir" && unitrace_gen "$@" --quiet)
    rm -f "$dir"/dump/*.visaasm   # stubs nobody reads
}
# gen: a case of the earlier generator, rewritten only with REGEN_INPUTS=1.
gen() {
    if [ -n "$REGEN_INPUTS" ]; then ugen "$@"; fi
}
# run DIR SUFFIX OPTIONS...: the original on a copy of the dump (it writes
# <file>.asm.ip into the dump folder); keeps its -r file and its stdout.
run() {
    local dir="$here/$1" suffix="$2"; shift 2
    local pdf=charts.pdf
    [ -z "$suffix" ] || pdf="${suffix#_}.pdf"   # the names its messages show
    rm -rf "$tmp/case" && mkdir "$tmp/case"
    cp -r "$dir/dump" "$dir/stalls.csv" "$tmp/case/"
    (cd "$tmp/case" && "$PYTHON" "$orig" "$@" -s dump -r "report$suffix.txt" -o "$pdf" stalls.csv) \
        > "$dir/stdout$suffix.orig.txt"
    cp "$tmp/case/report$suffix.txt" "$dir/report$suffix.orig.txt"
}

gen src --seed 3 stalls stalls.csv --dump dump --kernels 3 --instructions 40
run src ""
run src _k -k 'main::{lambda(auto:1)#4}' -n 3
run src _n0 -n 0
gen nosrc --seed 5 stalls stalls.csv --dump dump --kernels 3 --instructions 40 --no-source
run nosrc "" -n -1
gen raw --seed 7 stalls stalls.csv --dump dump --kernels 3 --instructions 40 \
    --no-asm-addresses --with-ip-psdep --ip-style 0x
run raw ""
ugen ugen --seed 51 stalls stalls.csv --dump dump --kernels 5 --instructions 90
run ugen ""
run ugen _n3 -n 3
