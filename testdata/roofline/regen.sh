#!/usr/bin/env bash
# Regenerates the roofline test data: the unitrace-gen profile pairs
# (ugen_*), the original's example and device file, the ORIGINAL
# roofline.py's stdout (*.orig.stdout) and the data points of the pages it
# wrote (*.orig.points). Not run by the tests.
#   UNITRACE_SCRIPTS=/path/to/pti-gpu/tools/unitrace/scripts \
#   [REGEN_INPUTS=1] PYTHON=/path/to/python-with-pandas testdata/roofline/regen.sh
# (see testdata/regen_env.sh). The gen_* and sample_* pairs were written by an
# earlier generator with the options below; they are kept unless
# REGEN_INPUTS=1, which rewrites them with unitrace-gen and the same options.
# fake_unitrace.sh is ours and not touched.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/../regen_env.sh"
require UNITRACE_SCRIPTS
rl="$UNITRACE_SCRIPTS/roofline"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here"

# ugen NAME GENERATOR-OPTIONS...: NAME_compute.txt + NAME_memory.txt
ugen() {
    local name=$1; shift
    unitrace_gen "$@" --compute "${name}_compute.txt" --memory "${name}_memory.txt" --quiet
}
ugen ugen_mixed --seed 41 roofline --kernels 7 --instances 3
ugen ugen_v1 --seed 42 roofline --format v1 --devices 2 --kernels 5 --instances 2
ugen ugen_old --seed 43 roofline --format old --kernels 4 --instances 2 --precision fp16_xmx
# gen: a pair of the earlier generator, rewritten only with REGEN_INPUTS=1.
gen() {
    if [ -n "$REGEN_INPUTS" ]; then ugen "$@"; fi
}
gen gen_new roofline
gen gen_v1 --seed 5 roofline --format v1 --devices 2 --kernels 5 --instances 2
gen gen_old --seed 9 roofline --format old --kernels 4 --instances 2 --precision bf16_xmx
gen gen_fp16 --seed 11 roofline --kernels 4 --instances 2 --precision fp16
gen gen_fp64 --seed 13 roofline --kernels 5 --instances 2 --precision fp64
gen gen_mixed --seed 31 roofline --kernels 8 --instances 2
gen sample --seed 21 roofline --kernels 10 --instances 2 --precision fp32
cp "$rl/example/gemm_fp16_flops.1799853" "$rl/example/gemm_fp16_bytes.1799860" \
    "$rl/device_configs/PVC_1tile.csv" .

# orig STDOUT PAGE COMPUTE MEMORY: the original's summary, and its page
# written to $tmp/PAGE.html (it appends .html). The FP16 case crashes while
# drawing the page, after printing the summary: that is expected.
orig() {
    local stdout=$1 page=$2 compute=$3 memory=$4
    (cd "$tmp" && "$PYTHON" "$rl/roofline.py" --compute "$here/$compute" --memory "$here/$memory" \
        --device "$here/PVC_1tile.csv" --output "$page") > "$stdout" || [ "$page" = crash ]
}
orig gemm_fp16.orig.stdout orig_gemm gemm_fp16_flops.1799853 gemm_fp16_bytes.1799860
for x in gen_new gen_v1 gen_old gen_fp64 ugen_mixed ugen_v1 ugen_old; do
    orig "$x.orig.stdout" "orig_${x#gen_}" "${x}_compute.txt" "${x}_memory.txt"
done
orig gen_fp16.orig.stdout crash gen_fp16_compute.txt gen_fp16_memory.txt 2>/dev/null

# The page's title and the x/y of every point of its two data series, as
# written in the HTML (Python float reprs).
# (The page names stay orig_*: the title the points file records holds it.)
for pair in orig_gemm:gemm_fp16 orig_new:gen_new orig_fp64:gen_fp64; do
    page=${pair%%:*}
    "$PYTHON" - "$tmp/$page.html" > "${pair#*:}.orig.points" <<'PY'
import ast, re, sys
html = open(sys.argv[1]).read()
print("# title: " + re.search(r'title: \{ text: "([^"]*)"', html).group(1))
for series in ("L3_data", "Gpu_memory_data"):
    block = html.split('name: "%s", dataPoints: [' % series, 1)[1].split('}]\n', 1)[0]
    for p in ast.literal_eval("[" + block + "}]") if block.strip() else []:
        print(series, repr(p["x"]), repr(p["y"]))
PY
done
