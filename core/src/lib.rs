//! Shared parsing core of unitrace-tools.
//!
//! One module per input format (see docs/formats.md and
//! ARCHITECTURE.md); every parser works over `impl BufRead`
//! or `&[u8]`, streams, and reports problems as typed errors that carry the
//! file and line they refer to. The CLIs (analyze, categorize, summary,
//! roofline, mergetrace) only parse arguments, call into this crate and
//! render.

pub mod atomic;
pub mod error;

pub use atomic::AtomicFile;
pub use error::{InputError, Position};
pub mod category_schema;
pub mod cli;
pub mod csv_sections;
pub mod demangle;
pub mod device_config;
pub mod ini_schema;
pub mod metric_csv;
pub mod pftrace;
pub mod pftrace_merged_input;
pub mod progress;
pub mod pyfmt;
pub mod result_dir;
pub mod roofline_profile;
pub mod shader_dump;
pub mod shell_words;
pub mod stall_csv;
pub mod stall_report;
pub mod summary_tarball;
pub mod summary_text;
pub mod timeline;
pub mod trace;
pub mod walk;
pub mod watched_file;
/// The former path of [`trace::decimal`], still named by some users.
pub mod whole_file;
