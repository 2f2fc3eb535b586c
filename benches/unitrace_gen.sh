# Sourced by the benchmark scripts (bash): `unitrace_gen ARGS...` runs the
# repository's input generator (docs/unitrace-gen.md): $UNITRACE_GEN when
# set, else the workspace's `unitrace-gen`, built on first use into
# $CARGO_TARGET_DIR (default: target/ of the repository).
unitrace_gen() {
    if [ -z "${UNITRACE_GEN:-}" ]; then
        local repo
        repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
        (cd "$repo" && cargo build --release --locked -p unitrace-gen >&2)
        UNITRACE_GEN="${CARGO_TARGET_DIR:-$repo/target}/release/unitrace-gen"
    fi
    "$UNITRACE_GEN" "$@"
}
