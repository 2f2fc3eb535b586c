//! PyTorch profiler (Kineto) trace JSON (docs/formats.md#kineto-json,
//! `unitrace_core::timeline::kineto`): the trace source gives events or a
//! one-line error, never a panic, on any bytes, read as they are and as the
//! events of a Kineto envelope (so that every input reaches the Kineto
//! vocabulary: clock base, device labels, `distributedInfo`, correlation
//! flows, collectives); and it agrees with itself:
//! * device operations and host spans it delivers never end before they
//!   start (those are dropped, and said so);
//! * reading the same bytes twice gives the same calls (no hidden state);
//! * an error is one line naming the input.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/kineto_json/*`).

use std::path::Path;

use unitrace_core::timeline;

// Both exercises record through this sink; the regression tests build
// them into one crate, where the file is then a module twice.
#[allow(clippy::duplicate_mod)]
#[path = "timeline_recorder.rs"]
mod timeline_recorder;
use timeline_recorder::Recorder;

/// What precedes the fuzzer's bytes in the second read: a Kineto header
/// (it is what tells Kineto from unitrace, docs/formats.md#timeline-detection)
/// with a clock base and a rank, and the opening of the event array.
const ENVELOPE_HEAD: &[u8] = br#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Intel(R) Data Center GPU Max 1550"}], "distributedInfo": {"backend": "xccl", "rank": 3, "world_size": 4}, "baseTimeNanoseconds": 1733400000000000000, "traceEvents": ["#;

/// The calls of one read, and its error line if any.
fn read(bytes: &[u8]) -> (Vec<String>, Option<String>) {
    let mut rec = Recorder::default();
    let result = timeline::read_bytes(bytes, Path::new("fuzz.pt.trace.json"), &mut rec);
    let err = result.err().map(|e| e.to_string());
    if let Some(e) = &err {
        assert!(!e.contains('\n'), "an error of several lines: {e:?}");
        assert!(
            e.starts_with("fuzz.pt.trace.json"),
            "the error names no input: {e:?}"
        );
    }
    (rec.calls, err)
}

pub fn run(data: &[u8]) {
    let first = read(data);
    assert_eq!(first, read(data), "two reads of the same bytes differ");
    // A gzipped seed (recorded traces are) gives its inflated events.
    let mut inflated = Vec::new();
    let body = if data.starts_with(&[0x1f, 0x8b]) {
        use std::io::Read;
        let gz = flate2::read::MultiGzDecoder::new(data);
        let _ = gz.take(1 << 20).read_to_end(&mut inflated);
        &inflated[..]
    } else {
        data
    };
    let mut wrapped = ENVELOPE_HEAD.to_vec();
    wrapped.extend_from_slice(body);
    let inside = read(&wrapped);
    assert_eq!(inside, read(&wrapped), "two reads of the same bytes differ");
    // Closed as Kineto closes it: the same, or fewer events when the
    // fuzzer's bytes close the array themselves.
    wrapped.extend_from_slice(b"]}");
    read(&wrapped);
}
