# Sourced by the golden-regeneration scripts under testdata/ (never by the
# tests, which only read committed files). What those scripts need lies
# outside this repository and is named by environment variables:
#
#   UNITRACE_SCRIPTS  the original scripts: tools/unitrace/scripts of an
#                     intel/pti-gpu checkout at fcd0ca8
#   GEN_UNITRACE      gen_unitrace.py, the synthetic unitrace-output generator
#                     (deterministic per seed) that wrote the test inputs
#   PYTHON            the Python that runs the originals (default: python3);
#                     analyzeperfmetrics.py and roofline.py need pandas and
#                     matplotlib; goldens were made with Python 3.11.7,
#                     pandas 3.1.1, matplotlib 3.11.2, numpy 2.4.6
#
# tests/README.md ("Golden files") says which script makes which files.

PYTHON=${PYTHON:-python3}

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
