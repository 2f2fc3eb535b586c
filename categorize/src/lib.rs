//! Library part of the `categorize` and `summary` tools: command lines,
//! aggregation and rendering over the parsers of unitrace-core.

pub mod compile;
pub mod pyagg;
pub mod ranks;
pub mod summary;
