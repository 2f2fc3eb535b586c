//! Library part of the `analyze` tool (rendering and glue over unitrace-core).
