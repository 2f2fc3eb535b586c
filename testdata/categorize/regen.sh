#!/usr/bin/env bash
# Regenerates the golden JSON files of testdata/categorize/ with the ORIGINAL
# categorize.py. Not run by the tests (they read the committed files).
#   UNITRACE_SCRIPTS=/path/to/pti-gpu/tools/unitrace/scripts [PYTHON=python3] \
#   testdata/categorize/regen.sh
# (see testdata/regen_env.sh). categorize.py asks for Python 3.13 only for one
# ConfigParser keyword whose value is the 3.11 default; run_orig_categorize.py
# drops that keyword so the unmodified original runs on Python 3.11.
# The *.ini inputs are committed (edge.ini and inductor.base.ini are ours;
# LLaMA.ini/LLaMA.orig.json are copied from the original's summary/schemas/).
set -euo pipefail
cd "$(dirname "$0")"
. ../regen_env.sh
require UNITRACE_SCRIPTS
orig="$UNITRACE_SCRIPTS/summary/categorize.py"
run() { "$PYTHON" run_orig_categorize.py "$orig" "$@"; }

cp "$UNITRACE_SCRIPTS/summary/schemas/LLaMA.ini" "$UNITRACE_SCRIPTS/summary/schemas/LLaMA.json" .
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The method check: the original's compiler reproduces its shipped JSON.
run --ini LLaMA.ini --json "$tmp/LLaMA.json"
cmp "$tmp/LLaMA.json" LLaMA.orig.json
run --ini LLaMA.ini --json LLaMA.orig.nospaces.json --no-remove-spaces
run --ini LLaMA.ini --json LLaMA.orig.pretty.json -vvv
run --ini edge.ini --json edge.orig.json
run --ini edge.ini --json edge.orig.nospaces.json --no-remove-spaces
run --ini edge.ini --json edge.orig.pretty.json -vv
run --ini inductor.base.ini --json inductor.base.orig.json
