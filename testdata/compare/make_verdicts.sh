#!/bin/sh
# Writes the verdict cases of compare's tests (compare/tests/verdicts.rs);
# run from this folder. gemm10/base is generated (docs/unitrace-gen.md),
# gemm10/cand and runs/ are derived or written by make_verdicts.py.
set -eu
. ../regen_env.sh
rm -rf gemm10
unitrace_gen trace gemm10/base -q --ranks 8 --events 150 --seed 5 --straggler none
"$PYTHON" make_verdicts.py
