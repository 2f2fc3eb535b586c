#!/usr/bin/env bash
# Regenerates the golden outputs of the original mergetrace.py and the
# unitrace-gen input `ugen/`. Not run by the tests (they only read the
# committed files).
# usage: UNITRACE_SCRIPTS=/path/to/pti-gpu/tools/unitrace/scripts \
#        [REGEN_INPUTS=1] [PYTHON=python3] testdata/trace/make_golden.sh
# (see testdata/regen_env.sh; mergetrace.py needs only the standard library).
# `two/`, `trunc/` and `collision/` were written by an earlier generator with
# the options below; they are kept unless REGEN_INPUTS=1, which rewrites them
# with the equivalent unitrace-gen commands.
# The original edits its inputs in place (docs/compatibility.md#mergetrace-1):
# it only ever sees copies made in a temporary directory.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../regen_env.sh"
require UNITRACE_SCRIPTS
orig="$UNITRACE_SCRIPTS/tracemerge/mergetrace.py"
py="$PYTHON"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

rm -rf "$here/golden" "$here/ugen"
mkdir -p "$here/golden"
# Three ranks of two training steps, chart links, B/E and X ranges.
unitrace_gen --seed 33 trace "$here/ugen" --ranks 3 --events 300 --steps 2 --metrics-link http -q
if [ -n "$REGEN_INPUTS" ]; then
    rm -rf "$here/two" "$here/trunc" "$here/collision"
    unitrace_gen --seed 3 trace "$here/two" --ranks 2 --events 120 -q
    unitrace_gen --seed 4 trace "$here/trunc" --ranks 3 --events 120 --cut 1:event,2:block -q
    unitrace_gen --seed 5 trace "$tmp/coll" --ranks 14 --ranks-per-node 12 --events 60 --pid-collision -q
    mkdir -p "$here/collision"
    # Ranks 0 and 12 run on different nodes with the same host pid.
    cp "$tmp/coll/"python.*.0.json "$tmp/coll/"python.*.12.json "$here/collision/"
fi

merge() { # NAME FILES...
    local name="$1"; shift
    rm -rf "$tmp/in"; mkdir "$tmp/in"
    local copies=()
    for f in "$@"; do cp "$f" "$tmp/in/"; copies+=("$tmp/in/$(basename "$f")"); done
    (cd "$tmp" && "$py" "$orig" -o "$here/golden/$name.json" "${copies[@]}" \
        | sed "s#$tmp/in/##" > "$here/golden/$name.stdout")
}
merge two.orig "$here"/two/*.json
merge ugen.orig "$here"/ugen/python.*.0.json "$here"/ugen/python.*.1.json "$here"/ugen/python.*.2.json
merge trunc.orig "$here"/trunc/python.*.0.json "$here"/trunc/python.*.1.json "$here"/trunc/python.*.2.json
merge collision.orig "$here"/collision/*.json

# Deliberate difference (docs/compatibility.md#mergetrace-truncated: the
# original drops a file cut mid-event): we keep the complete events of a block-truncated rank. The
# expected output is the original's merge of that rank cut by hand right
# after its last complete event (which the original then repairs).
blk="$(ls "$here"/trunc/python.*.2.json)"
mkdir -p "$tmp/cut"
"$py" - "$blk" "$tmp/cut/$(basename "$blk")" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
end = data.rfind(b'},\n') + 1   # end of the last complete event line
open(sys.argv[2], 'wb').write(data[:end])
PY
merge trunc_keep_complete.fixed "$here"/trunc/python.*.0.json "$here"/trunc/python.*.1.json "$tmp/cut/$(basename "$blk")"
"$py" -c "import sys; print(\"python\", sys.version.split()[0])" > "$here/golden/VERSIONS"
ls -la "$here"/golden
