#!/usr/bin/env bash
# Regenerates the inputs under testdata/metrics/ with the synthetic
# generator and the golden listings (*.orig.list.txt) of the ORIGINAL
# analyzeperfmetrics.py -l for them. Not needed by the tests (everything is
# committed); kept so the goldens can be reproduced.
#
# usage: UNITRACE_SCRIPTS=/path/to/pti-gpu/tools/unitrace/scripts \
#        GEN_UNITRACE=/path/to/gen_unitrace.py [PYTHON=python3] testdata/metrics/regen.sh
# (see testdata/regen_env.sh). Where the original is wrong the expected
# listing NAME.fixed.list.txt is written by hand (see README.md) and not
# touched, only its input is regenerated.
set -euo pipefail
cd "$(dirname "$0")"
. ../regen_env.sh
require UNITRACE_SCRIPTS GEN_UNITRACE
GEN=$GEN_UNITRACE
ORIG=$UNITRACE_SCRIPTS/metrics/analyzeperfmetrics.py
PY=$PYTHON
m() { out=$1; shift; "$PY" "$GEN" --seed 11 metrics "$out" --kernels 8 --instances 2 --samples 2 --quiet "$@"; }
s() { out=$1; shift; d=$(mktemp -d); "$PY" "$GEN" --seed 11 stalls "$out" --dump "$d" --kernels 4 --instructions 10 --quiet "$@"; rm -rf "$d"; }

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
m sampling_crlf.csv && sed -i 's/$/\r/' sampling_crlf.csv
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
