//! Library part of the `mergetrace` tool (rendering and glue over unitrace-core).
