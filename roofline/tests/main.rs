//! Integration tests of `roofline`: one test binary for the whole crate (one link
//! instead of one per file; see tests/README.md). Each module is one
//! former test file; add a new area as `tests/NAME.rs` and list it here.

mod chart;
mod chromium;
mod cli;
mod device_configs;
