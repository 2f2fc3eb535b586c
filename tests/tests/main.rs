//! Cross-tool system tests: one test binary for the whole crate (one link
//! instead of one per file; see tests/README.md). Each module is one
//! former test file; add a new area as `tests/NAME.rs` and list it here.

mod bad_inputs;
mod bounded_options;
mod changed_inputs;
mod fuzz_regressions;
mod hardening;
mod interrupts;
mod mergetrace_stats;
mod output_is_input;
mod parquet_tables;
mod rank_folders;
mod repository_rules;
mod sample_script;
mod walked_folders;

/// With `autotests = false` a `tests/*.rs` file not declared above would
/// never be built: fail instead (tests/README.md, "Layout").
#[test]
fn every_test_file_is_a_module_of_main() {
    unitrace_system_tests::layout::assert_every_test_file_is_a_module(env!("CARGO_MANIFEST_DIR"));
}
