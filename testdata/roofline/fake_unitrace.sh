#!/bin/sh
# Stand-in for unitrace in the tests of `roofline --app` (no Intel GPU on
# the test machines). Accepts the options roofline passes, writes the
# metric file of the requested group under the name unitrace uses
# (`<-o path>.metrics.<pid>`, plus the main log `<-o path>.<pid>` and a
# trace `<-o path>.<pid>.json`), and records its arguments.
#
#   FAKE_UNITRACE_DATA  directory with gen_new_{compute,memory}.txt (required)
#   FAKE_UNITRACE_GEN   path of a unitrace-gen binary: generate fresh files instead
#   FAKE_UNITRACE_LOG   append "group=..", "arg=.." lines (one per app argument)
#   FAKE_UNITRACE_FAIL  group name whose run exits with status 3
set -eu
group=
out=
while [ $# -gt 0 ]; do
    case "$1" in
        --group|-g) group=$2; shift 2 ;;
        -o|--output) out=$2; shift 2 ;;
        --demangle|-q|--metric-query|--chrome-kernel-logging) shift ;;
        *) break ;;
    esac
done
if [ -n "${FAKE_UNITRACE_LOG:-}" ]; then
    {
        echo "group=$group out=$out"
        for a in "$@"; do echo "arg=$a"; done
    } >>"$FAKE_UNITRACE_LOG"
fi
if [ "${FAKE_UNITRACE_FAIL:-}" = "$group" ]; then
    echo "unitrace: simulated failure of the $group run" >&2
    exit 3
fi
case "$group" in
    ComputeBasic) which=memory ;;
    VectorEngine138) which=compute ;;
    *) echo "fake unitrace: unknown group '$group'" >&2; exit 2 ;;
esac
if [ -n "${FAKE_UNITRACE_GEN:-}" ]; then
    "$FAKE_UNITRACE_GEN" roofline --quiet --compute "$out.c.tmp" --memory "$out.m.tmp"
    if [ $which = memory ]; then mv "$out.m.tmp" "$out.metrics.$$"; rm -f "$out.c.tmp"
    else mv "$out.c.tmp" "$out.metrics.$$"; rm -f "$out.m.tmp"; fi
else
    cp "${FAKE_UNITRACE_DATA:?}/gen_new_$which.txt" "$out.metrics.$$"
fi
: >"$out.$$"
printf '{"traceEvents":[]}\n' >"$out.$$.json"
