#!/usr/bin/env bash
# The whole test suite of unitrace-tools, runnable on a fresh machine that has
# only the Rust toolchain: installs the Debian packages the tests use, then
# runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# Debian packages used by tests: pdftoppm/pdftotext (poppler-utils) check that
# PDFs render; chromium loads the HTML pages offline; GNU parallel runs the
# tracestat recipe of docs/tracestat.md#past-one-machine.
need=()
command -v pdftoppm >/dev/null 2>&1 || need+=(poppler-utils)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v parallel >/dev/null 2>&1 || need+=(parallel)
if [ ${#need[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing ${need[*]}" >&2
    if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
    $SUDO apt-get update -qq >/dev/null 2>&1 || true
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
        || echo "test.sh: could not install ${need[*]}; tests that need them will fail" >&2
fi

# Python packages the tests read Parquet with: duckdb runs the queries of
# docs/sql.md (tracestat/tests/events.rs); duckdb and polars read every
# table option's Parquet file back (tests/tests/parquet_tables.rs). Those
# tests fail without them, saying how to install. Wheels only: seconds.
for pkg in duckdb polars; do
    if ! python3 -c "import $pkg" >/dev/null 2>&1; then
        echo "test.sh: installing the Python package $pkg" >&2
        python3 -m pip install --user --quiet --only-binary=:all: "$pkg" >/dev/null 2>&1 \
            || python3 -m pip install --user --quiet --only-binary=:all: --break-system-packages "$pkg" >/dev/null 2>&1 \
            || echo "test.sh: could not install $pkg (python3 -m pip install --user $pkg); the tests reading Parquet with it will fail" >&2
    fi
done

cargo test --workspace --release --locked "$@"
