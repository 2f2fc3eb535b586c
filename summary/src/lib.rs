//! Library part of the `summary` tool: per-category device and CCL time
//! from an archive of unitrace text summaries, over the parsers of
//! unitrace-core.
//!
//! Modules, each depending only on those listed before it:
//! * [`pyagg`]: Python numbers and the aggregators of summary.py;
//! * [`coverage`]: what no schema rule matched;
//! * [`ranks`]: the per-rank table and its renderings;
//! * [`members`]: which archive members are summaries, parsing one;
//! * [`aggregate`]: the run's state, from member summaries to the summary
//!   JSON, the table and the coverage report;
//! * [`cli`]: command line and run.

pub mod aggregate;
pub mod cli;
pub mod coverage;
pub mod members;
pub mod pyagg;
pub mod ranks;
