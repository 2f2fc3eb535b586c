//! Gzipped traces (docs/formats.md#timeline-detection, `unitrace_core::timeline`):
//! any bytes read as a gzip stream give events, a cut or a one-line error,
//! never a panic; and inflating on the fly changes nothing:
//! * the bytes gzipped (one member, or split into two members) read like
//!   the bytes themselves: the same calls to the sink, and an error
//!   exactly when the plain read has one;
//! * the gzip stream cut anywhere (a writer killed mid-member) reads like
//!   a cut file: no panic, and never more events than the whole;
//! * the fuzzer's bytes behind a gzip header (`1f 8b`) read without panic.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/gzip_trace/*`).

use std::io::Write;
use std::path::Path;

use unitrace_core::timeline;

// Both exercises record through this sink; the regression tests build
// them into one crate, where the file is then a module twice.
#[allow(clippy::duplicate_mod)]
#[path = "timeline_recorder.rs"]
mod timeline_recorder;
use timeline_recorder::Recorder;

fn read(bytes: &[u8]) -> (Vec<String>, Option<String>) {
    let mut rec = Recorder::default();
    let result = timeline::read_bytes(bytes, Path::new("fuzz.json.gz"), &mut rec);
    let err = result.err().map(|e| e.to_string());
    if let Some(e) = &err {
        assert!(!e.contains('\n'), "an error of several lines: {e:?}");
    }
    (rec.calls, err)
}

fn gzip(parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(part).unwrap();
        out.extend(gz.finish().unwrap());
    }
    out
}

pub fn run(data: &[u8]) {
    // The bytes as they are (gzip's magic included or not).
    read(data);
    if data.starts_with(&[0x1f, 0x8b]) {
        // Already gzip: nothing to compare with.
        return;
    }
    let plain = read(data);
    let whole = gzip(&[data]);
    let gz = read(&whole);
    assert_eq!(plain.0, gz.0, "gzip changes the calls");
    assert_eq!(
        plain.1.is_some(),
        gz.1.is_some(),
        "gzip changes the outcome: {plain:?} / {gz:?}"
    );
    let (a, b) = data.split_at(data.len() / 2);
    let two = read(&gzip(&[a, b]));
    assert_eq!(plain.0, two.0, "two gzip members change the calls");
    assert_eq!(
        plain.1.is_some(),
        two.1.is_some(),
        "two gzip members change the outcome"
    );
    // Cut members: no panic, no more device operations than the whole.
    let ops = |calls: &[String]| calls.iter().filter(|c| c.starts_with("device_op")).count();
    for cut in [
        whole.len() / 3,
        whole.len() / 2,
        whole.len().saturating_sub(9),
    ] {
        let (calls, _) = read(&whole[..cut]);
        assert!(ops(&calls) <= ops(&plain.0), "a cut stream has more events");
    }
    // The fuzzer's bytes as the body of a gzip member.
    let mut fake = vec![0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0xff];
    fake.extend_from_slice(data);
    read(&fake);
}
