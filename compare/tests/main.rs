//! End-to-end tests of the `compare` binary on the hand-made pairs of
//! testdata/compare (make_traces.py says what differs).

mod cli;
