//! Library part of the `roofline` tool (rendering and glue over unitrace-core).
