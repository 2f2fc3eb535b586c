//! Integration tests of `analyze` and `uniview`: one test binary for the whole crate (one link
//! instead of one per file; see tests/README.md). Each module is one
//! former test file; add a new area as `tests/NAME.rs` and list it here.

mod charts;
mod common;
mod dashboard;
mod data_parquet;
mod find_kernel;
mod instance_names;
mod list;
mod pdf_pages;
mod result_dir;
mod rows_before_banner;
mod server;
mod server_chromium;
mod server_common;
mod server_errors;
mod server_index;
mod server_tls;
mod small_fixes;
mod stall_dashboard;
mod stall_report;
mod time_axis;
mod uniview;
mod uniview_options;
mod uniview_result_dir_index;
mod uniview_result_dir_links;
mod validity;

/// With `autotests = false` a `tests/*.rs` file not declared above would
/// never be built: fail instead (tests/README.md, "Layout").
#[test]
fn every_test_file_is_a_module_of_main() {
    unitrace_system_tests::layout::assert_every_test_file_is_a_module(env!("CARGO_MANIFEST_DIR"));
}
