//! The metric dashboard (docs/analyze.md#dashboard): what the chart server
//! answers at `/`, `/perfdashboard?gid=N` and `/<kernel>/<gid>?format=html`
//! for metric files, and what `analyze -o x.html` writes. Interactive pages in the shared look of
//! `render::dashboard`, data inline, no network but the server's own
//! "compare with" answer.
//!
//! * [`data`]: counters (columns with a unit) grouped by unit, the default
//!   selection, one instance's samples as JSON;
//! * [`page`]: the instance pages (server and static file) and their
//!   script;
//! * [`index_page`]: the index (kernels, instance links, mean/max per
//!   counter) and [`index_page::KernelStats`], filled by the server's one
//!   start-up pass.

pub mod data;
pub mod index_page;
pub mod page;
