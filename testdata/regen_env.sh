# Sourced by the golden-regeneration scripts under testdata/ (never by the
# tests, which only read committed files). What those scripts need lies
# outside this repository and is named by environment variables:
#
#   UNITRACE_SCRIPTS  the original scripts: tools/unitrace/scripts of an
#                     intel/pti-gpu checkout at fcd0ca8
#   UNITRACE_GEN      (optional) the unitrace-gen binary that writes the
#                     generated inputs (docs/unitrace-gen.md); by default the
#                     workspace's, built with cargo on first use
#   REGEN_INPUTS      set to 1 to also rewrite the inputs an earlier generator
#                     wrote (kept by default: the tests' known answers are
#                     numbers of those files) with the equivalent unitrace-gen
#                     command each script names; the goldens of the originals
#                     then follow, and the hand-written expected files, the
#                     known answers of the tests and the areas' READMEs must
#                     be reviewed (tests/README.md, "Golden files")
#   PYTHON            the Python that runs the originals (default: python3);
#                     analyzeperfmetrics.py and roofline.py need pandas and
#                     matplotlib; goldens were made with Python 3.11.7,
#                     pandas 3.1.1, matplotlib 3.11.2, numpy 2.4.6
#
# tests/README.md ("Golden files") says which script makes which files.

PYTHON=${PYTHON:-python3}
REGEN_INPUTS=${REGEN_INPUTS:-}

# unitrace_gen ARGS...: runs the repository's generator, $UNITRACE_GEN or the
# workspace's unitrace-gen (built first, into $CARGO_TARGET_DIR or the
# default of scripts/test.sh). POSIX sh: charts/regen.sh sources this too.
unitrace_gen() {
    if [ -z "${UNITRACE_GEN:-}" ]; then
        _repo=$(git rev-parse --show-toplevel) || exit 2
        _target=${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}
        (cd "$_repo" && CARGO_TARGET_DIR="$_target" cargo build --release --locked -p unitrace-gen >&2) || exit 2
        UNITRACE_GEN=$_target/release/unitrace-gen
    fi
    "$UNITRACE_GEN" "$@"
}

# require VAR... : stop with a one-line message when a variable is unset or
# names nothing on disk.
require() {
    for var in "$@"; do
        eval "value=\${$var:-}"
        if [ -z "$value" ]; then
            echo "$0: set $var (see tests/README.md, \"Golden files\")" >&2
            exit 2
        fi
        if [ ! -e "$value" ]; then
            echo "$0: $var=$value does not exist" >&2
            exit 2
        fi
    done
}
