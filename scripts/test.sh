#!/usr/bin/env bash
# The whole test suite of unitrace-tools, runnable on a fresh machine that has
# only the Rust toolchain: installs the Debian packages the tests use, then
# runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# Debian packages used by tests: pdftoppm/pdftotext (poppler-utils) check that
# PDFs render; chromium loads the HTML pages offline; GNU parallel, Slurm
# (slurmctld, slurmd, slurm-client, munge) and MPICH's mpiexec run the
# tracestat recipes of docs/tracestat.md#past-one-machine for real.
need=()
command -v pdftoppm >/dev/null 2>&1 || need+=(poppler-utils)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v parallel >/dev/null 2>&1 || need+=(parallel)
command -v slurmctld >/dev/null 2>&1 || need+=(slurmctld)
command -v slurmd >/dev/null 2>&1 || need+=(slurmd)
command -v sbatch >/dev/null 2>&1 || need+=(slurm-client)
command -v munged >/dev/null 2>&1 || need+=(munge)
command -v mpiexec >/dev/null 2>&1 || need+=(mpich)
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing ${need[*]}" >&2
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq >/dev/null 2>&1 || true
    # No daemon is started by the packages' scripts (no init system here);
    # scripts/test-services.sh starts its own.
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
        || echo "test.sh: could not install ${need[*]}; tests that need them will fail" >&2
fi

# Services (tests/README.md#services): a one-node Slurm cluster for the
# tests of scripts/tracestat-slurm.sh, reused when one is already running and
# left running afterwards (`scripts/test-services.sh stop` stops it). When it
# cannot start (not root, a container that forbids it), those tests fail
# under CI=1 (.ci/run) and skip with a message otherwise.
scripts/test-services.sh start \
    || echo "test.sh: Slurm did not start; the Slurm tests will fail under CI and be skipped otherwise" >&2

# Python packages the tests read Parquet with: duckdb runs the queries of
# docs/sql.md (tracestat/tests/events.rs); duckdb and polars read every
# table option's Parquet file back (tests/tests/parquet_tables.rs); duckdb,
# polars, Dask (with pyarrow) and PySpark read the events dataset and run
# the Dask versions of docs/sql.md (tracestat/tests/engines.rs). Those tests
# fail without them, saying how to install. Wheels only: seconds.
pip_user() {
    python3 -m pip install --user --quiet "$@" >/dev/null 2>&1 \
        || python3 -m pip install --user --quiet --break-system-packages "$@" >/dev/null 2>&1
}
for module_spec in duckdb:duckdb polars:polars pyarrow:pyarrow "dask.dataframe:dask[dataframe]"; do
    module="${module_spec%%:*}" spec="${module_spec#*:}"
    if ! python3 -c "import $module" >/dev/null 2>&1; then
        echo "test.sh: installing the Python package $spec" >&2
        pip_user --only-binary=:all: "$spec" \
            || echo "test.sh: could not install $spec (python3 -m pip install --user '$spec'); the tests reading Parquet with it will fail" >&2
    fi
done
# PySpark needs a Java runtime; where there is one, the Spark test must run.
# It is a source package of jars (about 450 MB, 20 s to fetch and install).
if java -version >/dev/null 2>&1 && ! python3 -c "import pyspark" >/dev/null 2>&1; then
    echo "test.sh: installing the Python package pyspark" >&2
    pip_user pyspark || echo "test.sh: could not install pyspark; the Spark test will fail" >&2
fi

cargo test --workspace --release --locked "$@"
