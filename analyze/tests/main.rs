//! Integration tests of `analyze` and `uniview`: one test binary for the whole crate (one link
//! instead of one per file; see tests/README.md). Each module is one
//! former test file; add a new area as `tests/NAME.rs` and list it here.

mod charts;
mod list;
mod pdf_pages;
mod result_dir;
mod server;
mod server_chromium;
mod server_common;
mod server_tls;
mod stall_report;
mod uniview;
mod validity;
