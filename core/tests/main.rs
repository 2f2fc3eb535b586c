//! Integration tests of unitrace-core: one test binary for the whole crate (one link
//! instead of one per file; see tests/README.md). Each module is one
//! former test file; add a new area as `tests/NAME.rs` and list it here.

mod fuzz_regressions;
mod gzip_ends;
mod pftrace_decoder;
mod timeline_formats;
mod timeline_kineto;
mod trace_scanner;

/// With `autotests = false` a `tests/*.rs` file not declared above would
/// never be built: fail instead (tests/README.md, "Layout").
#[test]
fn every_test_file_is_a_module_of_main() {
    unitrace_system_tests::layout::assert_every_test_file_is_a_module(env!("CARGO_MANIFEST_DIR"));
}
