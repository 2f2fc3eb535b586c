#!/bin/sh
# Regenerates the original's outputs for cases.txt (not used by the tests,
# which only read the committed results). Needs the original scripts, a
# Python with pandas + matplotlib, and poppler-utils (pdftotext, pdfinfo):
#   UNITRACE_SCRIPTS=/path/to/pti-gpu/tools/unitrace/scripts \
#   PYTHON=/path/to/python sh testdata/charts/regen.sh
# (see testdata/regen_env.sh). `-f pvc/...` options resolve against the
# original's metrics/config/ presets, or against PRESETS when set.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../regen_env.sh"
require UNITRACE_SCRIPTS
ORIG=$UNITRACE_SCRIPTS
PRESETS=${PRESETS:-$UNITRACE_SCRIPTS/metrics/config}
require PRESETS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep -v '^#' "$here/cases.txt" | while IFS= read -r line; do
    [ -n "$line" ] || continue
    name=${line%% *}
    rest=${line#* }
    input=${rest%% *}
    opts=${rest#* }
    # -f pvc/… resolves against the preset folder, like the original's config/.
    (cd "$PRESETS" && eval "set -- $opts" && "$PYTHON" "$ORIG/metrics/analyzeperfmetrics.py" \
        "$here/$input" "$@" -o "$tmp/$name.pdf") > "$here/$name.orig.stdout"
    sed -i "s|$tmp/||" "$here/$name.orig.stdout"
    pdftotext "$tmp/$name.pdf" "$here/$name.orig.txt"
    echo "$name: $(pdfinfo "$tmp/$name.pdf" | awk '/^Pages/ {print $2}') pages"
done
