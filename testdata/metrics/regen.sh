#!/usr/bin/env bash
# Regenerates the golden listings (*.orig.list.txt) of the ORIGINAL
# analyzeperfmetrics.py -l for the CSVs under testdata/metrics/, and the
# unitrace-gen inputs `ugen_*.csv`. Not needed by the tests (everything is
# committed); kept so the goldens can be reproduced.
#
# usage: UNITRACE_SCRIPTS=/path/to/pti-gpu/tools/unitrace/scripts \
#        [REGEN_INPUTS=1] [PYTHON=python3] testdata/metrics/regen.sh
# (see testdata/regen_env.sh). The other generated inputs were written by an
# earlier generator with the options shown below; they are kept unless
# REGEN_INPUTS=1, which rewrites them with unitrace-gen and the same options
# (then review the hand-written NAME.fixed.list.txt, see README.md). Where
# the original is wrong the expected listing NAME.fixed.list.txt is written
# by hand and not touched, only its input is regenerated.
set -euo pipefail
cd "$(dirname "$0")"
. ../regen_env.sh
require UNITRACE_SCRIPTS
ORIG=$UNITRACE_SCRIPTS/metrics/analyzeperfmetrics.py
PY=$PYTHON
gen_m() { out=$1; shift; unitrace_gen metrics "$out" --kernels 8 --instances 2 --samples 2 --quiet "$@"; }
gen_s() { out=$1; shift; d=$(mktemp -d); unitrace_gen stalls "$out" --dump "$d" --kernels 4 --instructions 10 --quiet "$@"; rm -rf "$d"; }
# m / s: an input of the earlier generator (seed 11), rewritten only with
# REGEN_INPUTS=1.
m() { if [ -n "$REGEN_INPUTS" ]; then gen_m "$@" --seed 11; fi; }
s() { if [ -n "$REGEN_INPUTS" ]; then gen_s "$@" --seed 11; fi; }

# unitrace-gen inputs, always rewritten (deterministic: the same bytes).
gen_m ugen_sampling_pvc.csv --seed 21
gen_m ugen_sampling_bmg_idle.csv --seed 22 --device-family bmg --idle-sampling
gen_m ugen_query_validity.csv --seed 23 --validity-columns --devices 2
gen_m ugen_sampling_unquoted_2dev.csv --seed 24 --unquoted-padded-names --devices 2
gen_s stalls_ugen_psdep.csv --seed 25 --with-ip-psdep

# Files the original lists correctly: goldens are its output.
m sampling_pvc.csv
m sampling_bmg.csv --device-family bmg
m query_pvc.csv --mode query
m query_bmg_2dev.csv --mode query --device-family bmg --devices 2
m sampling_trailing_comma.csv --trailing-comma
m sampling_unquoted_padded.csv --unquoted-padded-names
m sampling_general_floats.csv --float-style general
m sampling_3dev.csv --devices 3
m sampling_empty_kernel_rows.csv --empty-kernel-rows 3
m sampling_idle.csv --idle-sampling
m sampling_reshape.csv --reshape
if [ -n "$REGEN_INPUTS" ]; then
    gen_m sampling_crlf.csv --seed 11 && sed -i 's/$/\r/' sampling_crlf.csv
fi
s stalls_pvc.csv
s stalls_bmg_psdep.csv --with-ip-psdep
s stalls_ip0x.csv --ip-style 0x
s stalls_trailing_comma.csv --trailing-comma
for f in *.csv; do
    [ -e "${f%.csv}.fixed.list.txt" ] && continue
    "$PY" "$ORIG" -l "$f" > "${f%.csv}.orig.list.txt"
done

# Inputs where the original is wrong (expected NAME.fixed.list.txt).
m query_trailing_comma.csv --mode query --trailing-comma
m query_unquoted_padded.csv --mode query --unquoted-padded-names
m sampling_truncated_2dev.csv --truncated-last-instance --devices 2
m sampling_no_banner.csv --no-device-banner
s stalls_2dev.csv --devices 2
s stalls_no_banner.csv --no-device-banner
