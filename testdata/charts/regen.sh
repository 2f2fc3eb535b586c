#!/bin/sh
# Regenerates the original's outputs for cases.txt (not used by the tests,
# which only read the committed results). Needs the original scripts, a
# Python with pandas + matplotlib, and poppler-utils (pdftotext).
#   ORIG=/path/to/pti-gpu/tools/unitrace/scripts PYTHON=/path/to/python \
#   PRESETS=/path/to/metric-presets sh regen.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ORIG=${ORIG:-/work/orig/tools/unitrace/scripts}
PYTHON=${PYTHON:-/work/pyenv/bin/python}
PRESETS=${PRESETS:-/work/shared/testdata/real/metric-presets}
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
