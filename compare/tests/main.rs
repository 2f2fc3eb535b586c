//! End-to-end tests of the `compare` binary on the pairs of
//! testdata/compare (make_traces.py and make_verdicts.py say what differs):
//! `cli` every kind, output and gate; `hostile` damaged and hostile
//! inputs; `verdicts` significance and verdicts with known answers.

mod cli;
mod findings;
mod hostile;
mod kineto;
mod steps;
mod verdicts;

/// With `autotests = false` a `tests/*.rs` file not declared above would
/// never be built: fail instead (tests/README.md, "Layout").
#[test]
fn every_test_file_is_a_module_of_main() {
    unitrace_system_tests::layout::assert_every_test_file_is_a_module(env!("CARGO_MANIFEST_DIR"));
}
