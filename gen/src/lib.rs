//! unitrace-gen: synthetic unitrace outputs, deterministic per seed
//! (docs/unitrace-gen.md). Every input the tests and benchmarks of this
//! repository need, written from the formats of docs/formats.md: per-rank
//! traces ([`trace`]), metric CSVs ([`metrics`]), stall CSVs with shader
//! dumps ([`stalls`]), summary tarballs ([`summaries`]) and roofline
//! profiles ([`roofline`]).

pub mod cli;
pub mod kernels;
pub mod metrics;
pub mod names;
pub mod rng;
pub mod roofline;
pub mod stalls;
pub mod summaries;
pub mod trace;
pub mod units;
