# Sourced by the benchmark scripts (bash): `unitrace_gen ARGS...` runs the
# repository's input generator (docs/unitrace-gen.md): $UNITRACE_GEN when
# set, else the workspace's `unitrace-gen`, built on first use into
# $CARGO_TARGET_DIR (default: $HOME/.cache/unitrace-tools/target, as
# scripts/test.sh). testdata/regen_env.sh has the same for the golden
# regeneration scripts.
unitrace_gen() {
    if [ -z "${UNITRACE_GEN:-}" ]; then
        local repo
        repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
        local target="${CARGO_TARGET_DIR:-$HOME/.cache/unitrace-tools/target}"
        (cd "$repo" && CARGO_TARGET_DIR="$target" cargo build --release --locked -p unitrace-gen >&2)
        UNITRACE_GEN="$target/release/unitrace-gen"
    fi
    "$UNITRACE_GEN" "$@"
}
