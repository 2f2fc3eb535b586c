//! Library part of the `categorize` tool: the command line that compiles
//! an INI file of kernel categories into the JSON schema `summary` reads
//! (the parsers and the compiler are in unitrace-core).

pub mod compile;
