#!/usr/bin/env bash
# Fuzzes every parser of unitrace-core with libFuzzer (cargo-fuzz targets in
# fuzz/), SECONDS each (default 600), one target after the other, and prints
# one summary line per target: executions, executions/s, corpus size, and
# the crash file if any. Exit code 1 when a target crashed.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      # default: every target
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
# The corpus grows in fuzz/corpus/<target>/ (not committed), seeded from the
# repository's test data; crashes land in fuzz/artifacts/<target>/. Turn a
# crash into a regression test: minimize it (`cargo +nightly fuzz tmin
# TARGET FILE`), copy it to fuzz/regressions/<target>/, fix, and run
# `cargo test --release -p unitrace-core --test main fuzz_regressions`.
#
# Environment: CARGO_TARGET_DIR (default ~/.cache/unitrace-tools/fuzz-target),
# FUZZ_NICE (niceness, default 10), FUZZ_ARGS (extra libFuzzer flags).
set -uo pipefail

# Everything runs inside main, called with exit on the last line, so bash
# has parsed the whole file before the first command and reads nothing
# after it: editing or checking out the script during a long run is safe.
main() {
    cd "$(dirname "$0")/.."

    SECONDS_PER_TARGET=${1:-600}
    shift || true
    case $SECONDS_PER_TARGET in
        '' | *[!0-9]*)
            echo "fuzz.sh: SECONDS must be a whole number, got '$SECONDS_PER_TARGET'" >&2
            exit 2
            ;;
    esac

    TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/fuzz-target}
    NICE=${FUZZ_NICE:-10}
    TRIPLE=$(rustc +nightly -vV 2>/dev/null | sed -n 's/^host: //p')
    if [ -z "$TRIPLE" ]; then
        echo "fuzz.sh: no nightly toolchain (rustup toolchain install nightly)" >&2
        exit 2
    fi
    if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
        echo "fuzz.sh: cargo-fuzz missing (cargo install cargo-fuzz)" >&2
        exit 2
    fi

    ALL_TARGETS=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^unitrace-fuzz$')
    TARGETS=${*:-$ALL_TARGETS}

    # Seeds per target: folders or files of the repository (missing ones are
    # skipped, so the script works on branches where a format has no test data).
    seeds_for() {
        case $1 in
            metric_csv) echo testdata/metrics testdata/sample/metrics.csv tests/bad_inputs/metric_csv tests/bad_inputs/valid ;;
            stall_csv) echo testdata/metrics testdata/sample/stalls.csv tests/bad_inputs/stall_csv tests/bad_inputs/valid ;;
            option_file) echo analyze/presets/pvc analyze/presets/bmg tests/bad_inputs/option_file ;;
            shader_dump) echo testdata/sample/dump tests/bad_inputs/valid/dump tests/bad_inputs/shader_dump ;;
            summary_text) echo tests/bad_inputs/valid/output.4100.1.txt tests/bad_inputs/summary_text ;;
            summary_tarball) echo testdata/summary tests/bad_inputs/valid/summary.tgz tests/bad_inputs/tarball ;;
            trace_json) echo testdata/trace/two testdata/trace/trunc testdata/trace/collision tests/bad_inputs/trace_json ;;
            pftrace) echo testdata/trace/pftrace/legacy testdata/trace/pftrace/cut ;;
            kineto_json) echo testdata/kineto/hta/call_stack testdata/kineto/hta/critical_path/simple_add testdata/kineto/hta/critical_path/cuda_event_sync testdata/kineto/recorded/clean tests/bad_inputs/trace_json ;;
            gzip_trace) echo testdata/trace/two testdata/trace/trunc testdata/kineto/recorded/clean tests/bad_inputs/trace_json ;;
            ini_schema) echo schemas testdata/categorize tests/bad_inputs/valid/rules.ini tests/bad_inputs/ini_schema ;;
            category_schema) echo schemas testdata/categorize tests/bad_inputs/valid/rules.json tests/bad_inputs/json_schema ;;
            device_config) echo device_configs testdata/roofline/PVC_1tile.csv tests/bad_inputs/device_config ;;
            roofline_profile) echo testdata/roofline tests/bad_inputs/metric_csv tests/bad_inputs/valid ;;
            demangle) echo ;;
        esac
}

    dict_for() {
        case $1 in
            metric_csv | stall_csv | roofline_profile) echo fuzz/dicts/csv.dict ;;
            *) [ -f "fuzz/dicts/$1.dict" ] && echo "fuzz/dicts/$1.dict" ;;
        esac
}

    # Largest input per target. Small inputs reach the same parser states and
    # run far faster (each CSV reader allocates a 1 MiB buffer); long lines and
    # huge files are covered by tests/tests/bad_inputs.rs.
    max_len_for() {
        case $1 in
            metric_csv | stall_csv | roofline_profile | trace_json | summary_tarball | pftrace | kineto_json | gzip_trace) echo 8192 ;;
            *) echo 4096 ;;
        esac
}

    # cargo-fuzz builds one target or all of them: build all (incremental).
    mkdir -p "$TARGET_DIR"
    build_log=$TARGET_DIR/fuzz-build.log
    echo "fuzz.sh: building the fuzz targets (nightly, overflow checks on)" >&2
    if ! (cd fuzz && nice -n "$NICE" cargo +nightly fuzz build -s none --target-dir "$TARGET_DIR") \
        >"$build_log" 2>&1; then
        echo "fuzz.sh: build failed, see $build_log" >&2
        tail -20 "$build_log" >&2
        exit 2
    fi

    status=0
    for t in $TARGETS; do
        if ! printf '%s\n' $ALL_TARGETS | grep -qx "$t"; then
            printf '%-16s unknown target (have: %s)\n' "$t" "$(echo $ALL_TARGETS)"
            status=1
            continue
        fi
        bin=$TARGET_DIR/$TRIPLE/release/$t
        corpus=fuzz/corpus/$t
        artifacts=fuzz/artifacts/$t
        mkdir -p "$corpus" "$artifacts"
        for s in $(seeds_for "$t"); do
            if [ -d "$s" ]; then
                find "$s" -maxdepth 1 -type f -size -1M -exec cp -n {} "$corpus/" \; 2>/dev/null
            elif [ -f "$s" ]; then
                cp -n "$s" "$corpus/" 2>/dev/null
            fi
        done
        # Earlier crashers stay in the corpus so fixes are re-checked.
        [ -d "fuzz/regressions/$t" ] && cp -n fuzz/regressions/"$t"/* "$corpus/" 2>/dev/null
        dict=$(dict_for "$t")
        log=$artifacts/last-run.log
        before=$(ls "$artifacts" | grep -cv '^last-run.log$')
        # shellcheck disable=SC2086
        nice -n "$NICE" "$bin" "$corpus" \
            -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 \
            -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len_for "$t")" \
            -artifact_prefix="$artifacts/" ${dict:+-dict="$dict"} ${FUZZ_ARGS:-} \
            >"$log" 2>&1
        rc=$?
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
        size=$(ls "$corpus" | wc -l)
        after=$(ls "$artifacts" | grep -cv '^last-run.log$')
        if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
            crash=$(ls -t "$artifacts" | grep -v '^last-run.log$' | head -1)
            reason=$(grep -m1 -E "panicked at|ERROR: libFuzzer|SUMMARY" "$log" | cut -c1-160)
            printf '%-16s CRASH after %s execs: %s (%s; log %s)\n' "$t" "${execs:-?}" \
                "$artifacts/$crash" "$reason" "$log"
            status=1
        else
            printf '%-16s %12s execs in %ss (%s/s), corpus %s inputs, no crash\n' "$t" \
                "${execs:-?}" "$SECONDS_PER_TARGET" "${rate:-?}" "$size"
        fi
    done
    return $status
}

main "$@"; exit $?
