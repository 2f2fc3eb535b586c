#!/usr/bin/env bash
# Regenerates the golden outputs of testdata/summary/ and its unitrace-gen
# input ugen.tgz. Tests do not run this; they use the committed files. Run
# from the repository root:
#   UNITRACE_SCRIPTS=/path/to/pti-gpu/tools/unitrace/scripts \
#   [REGEN_INPUTS=1] [PYTHON=python3] testdata/summary/make_goldens.sh
# (see testdata/regen_env.sh; summary.py needs Python >= 3.10, no pandas).
# real_hd.tgz holds real unitrace -h/-d summaries; it is rebuilt from the
# folder REAL_SUMMARIES when that is set, else the committed one is reused.
# The other generated tarballs were written by an earlier generator with the
# options below (`g`); they are kept unless REGEN_INPUTS=1, which rewrites
# them with unitrace-gen and the same options.
set -euo pipefail
. testdata/regen_env.sh
require UNITRACE_SCRIPTS
ORIG=$UNITRACE_SCRIPTS/summary/summary.py
PY=$PYTHON
REAL=${REAL_SUMMARIES:-}
D=testdata/summary
S=schemas/LLaMA.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
orig() { "$PY" "$ORIG" --input "$1" --schema "$S" --aggregator "$2"; }
# g ARGS... OUT: the earlier generator's options, for REGEN_INPUTS=1.
# (K rows per rank; names repeat on several rows once K exceeds the
# generator's kernel families.)
g() { unitrace_gen summaries --ranks 4 --kernels "${K:-6}" --steps 20 --seed 7 -q "$@"; }

# 0. The unitrace-gen tarball: no duplicate names, every aggregator.
unitrace_gen --seed 9 summaries $D/ugen.tgz --ranks 4 --kernels 12 --steps 30 -q
for a in min max mean median sum min+1 max-1; do
  orig $D/ugen.tgz "$a" > "$D/ugen.orig.$a.json"
done

# 1. Parity inputs (no duplicate names): every aggregator.
if [ -n "$REGEN_INPUTS" ]; then
  g "$tmp/raw.tgz"
  python3 $D/normalize.py "$tmp/raw.tgz" $D/plain.tgz
fi
if [ -n "$REAL" ]; then
  require REAL_SUMMARIES
  (cd "$REAL" && tar czf "$tmp/real.tgz" --sort=name --mtime=2024-01-01 --owner=0 --group=0 ./*.d.txt ./*.h.txt)
  cp "$tmp/real.tgz" $D/real_hd.tgz
fi
if [ -n "$REGEN_INPUTS" ]; then
  g --launcher-files 1 --layout result-dir --ccl-summary once "$tmp/rd.tgz"
  python3 $D/normalize.py "$tmp/rd.tgz" $D/resultdir_launcher.tgz
fi
for a in min max mean median sum min+1 max-1; do
  orig $D/plain.tgz "$a" > "$D/plain.orig.$a.json"
  orig $D/real_hd.tgz "$a" > "$D/real_hd.orig.$a.json"
done
orig $D/resultdir_launcher.tgz mean > $D/resultdir_launcher.orig.mean.json

# 2. Quirk inputs (docs/compatibility.md#summary-1 ... #summary-8): expected = original on the normalized
#    tarball; the original on the raw tarball crashes or differs.
if [ -n "$REGEN_INPUTS" ]; then
  K=30 g "$D/dups.tgz"                            # 4: same name on two rows
  g --ccl-summary twice "$D/ccl_twice.tgz"        # 2
  g --kernel-submission "$D/submission.tgz"       # 1
  g --old-format "$D/old_format.tgz"              # 7 (unquoted commas)
  g --separate-tiles "$D/tiles.tgz"               # 6
  g --verbose-names "$D/verbose_names.tgz"        # 6
fi
for x in dups ccl_twice submission old_format tiles verbose_names; do
  python3 $D/normalize.py "$D/$x.tgz" "$tmp/$x.n.tgz"
  orig "$tmp/$x.n.tgz" mean > "$D/$x.fixed.mean.json"
done
for a in min median min+1; do
  python3 $D/normalize.py "$D/dups.tgz" "$tmp/dups.n.tgz"
  orig "$tmp/dups.n.tgz" "$a" > "$D/dups.fixed.$a.json"
  orig "$D/dups.tgz" "$a" > "$D/dups.orig.$a.json"
done
# 7: a binary member next to the plain logs (the original aborts).
mkdir -p "$tmp/bin" && tar xzf $D/plain.tgz -C "$tmp/bin"
head -c 3000 /dev/urandom > "$tmp/bin/zz_core.bin"
(cd "$tmp/bin" && tar czf "$OLDPWD/$D/binary_member.tgz" --sort=name --mtime=2024-01-01 --owner=0 --group=0 .)

# 3. Logs as users pack them (docs/compatibility.md#summary-8, #summary-9).
#    real_all.tgz: every real log, -t timelines included (`tar cfz x.tgz
#    output.*`); the original skips the timelines, so its output must be
#    real_hd's. real_job.tgz: the -h and -d reports of the ten programs in
#    one member, API then Device per process. joblog.tgz: plain.tgz's four
#    logs concatenated into one member; the original's output must be
#    plain's (one sample per report either way).
if [ -n "$REAL" ]; then
  (cd "$REAL" && tar czf "$tmp/all.tgz" --sort=name --mtime=2024-01-01 --owner=0 --group=0 ./*.txt)
  cp "$tmp/all.tgz" $D/real_all.tgz
  mkdir -p "$tmp/rjob"
  for p in cl_gemm conditional_trace dpc_gemm graph grf omp_gemm py_mat_mul py_vec_add temporal ze_gemm; do
    for k in h d; do
      if [ -f "$REAL/$p.$k.txt" ]; then cat "$REAL/$p.$k.txt"; fi
    done
  done > "$tmp/rjob/job.out"
  (cd "$tmp/rjob" && tar czf "$OLDPWD/$D/real_job.tgz" --sort=name --mtime=2024-01-01 --owner=0 --group=0 job.out)
fi
mkdir -p "$tmp/plain" "$tmp/job"
tar xzf $D/plain.tgz -C "$tmp/plain"
tar tzf $D/plain.tgz | while read -r m; do cat "$tmp/plain/$m"; done > "$tmp/job/job.log"
(cd "$tmp/job" && tar czf "$OLDPWD/$D/joblog.tgz" --sort=name --mtime=2024-01-01 --owner=0 --group=0 job.log)
for a in min max mean median sum min+1 max-1; do
  orig $D/real_all.tgz "$a" | cmp - "$D/real_hd.orig.$a.json"
  orig $D/joblog.tgz "$a" | cmp - "$D/plain.orig.$a.json"
  orig $D/real_job.tgz "$a" > "$D/real_job.orig.$a.json"
done
