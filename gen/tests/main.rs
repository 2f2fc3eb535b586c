//! Integration tests of `unitrace-gen`: one test binary for the crate (one
//! link instead of one per file; see tests/README.md). Every output is
//! written by the binary and read back by this repository's own tools.

mod common;
mod determinism;
mod outputs;
mod traces;

/// With `autotests = false` a `tests/*.rs` file not declared above would
/// never be built: fail instead (tests/README.md, "Layout").
#[test]
fn every_test_file_is_a_module_of_main() {
    unitrace_system_tests::layout::assert_every_test_file_is_a_module(env!("CARGO_MANIFEST_DIR"));
}
