//! Library part of the `categorize` tool (rendering and glue over unitrace-core).
