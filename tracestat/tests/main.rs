//! Integration tests of `tracestat`: one test binary for the whole crate (one link
//! instead of one per file; see tests/README.md). Each module is one
//! former test file; add a new area as `tests/NAME.rs` and list it here.

mod common;
mod console_rows;
mod critical_path;
mod engines;
mod events;
mod events_single_pass;
mod findings;
mod hand;
mod kineto;
mod known_answers;
mod launchers;
mod many_ranks;
mod padded_traces;
mod page;
mod partial_and_errors;
mod pftrace_collectives;
mod steps;
mod tables;
mod trust;

/// With `autotests = false` a `tests/*.rs` file not declared above would
/// never be built: fail instead (tests/README.md, "Layout").
#[test]
fn every_test_file_is_a_module_of_main() {
    unitrace_system_tests::layout::assert_every_test_file_is_a_module(env!("CARGO_MANIFEST_DIR"));
}
