//! How a gzipped trace's gzip stream ended, through the trace source
//! (docs/robustness.md#gzip): a cut in a member's header, its data or its
//! trailer, bytes after the last member whatever their number, a corrupt
//! member. Each is said once, in words that name it; none is mistaken for
//! an empty file or for a corrupt header.

use std::io::Write;
use std::path::{Path, PathBuf};

use unitrace_core::timeline::gzip::GzipCut;
use unitrace_core::timeline::{self, TimelineFormat, TimelineRead};

fn plain_trace() -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/trace/pftrace/legacy_json/python.100028.0.json");
    std::fs::read(p).unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn read(path: &Path) -> Result<TimelineRead, String> {
    timeline::read_file(path, &mut ()).map_err(|e| e.to_string())
}

#[test]
fn a_cut_trailer_is_a_cut_of_a_whole_trace() {
    let dir = tempfile::tempdir().unwrap();
    let text = plain_trace();
    let gz = gzip(&text);
    let whole = read(&write(dir.path(), "whole.gz", &gz)).unwrap();
    assert!(whole.cut.is_none() && whole.warnings.is_empty());
    for keep in [1, 4, 7, 8] {
        let p = write(dir.path(), "cut.json.gz", &gz[..gz.len() - keep]);
        let r = read(&p).unwrap();
        assert_eq!(r.events, whole.events, "{keep} trailer bytes missing");
        let cut = r.cut.expect("a cut trailer is a cut");
        assert_eq!((cut.gzip, cut.dropped_bytes), (Some(GzipCut::Trailer), 0));
        let said = cut.describe(TimelineFormat::ChromeJson);
        assert!(
            said.contains("8-byte trailer") && said.contains("CRC was not checked"),
            "{said}"
        );
    }
}

#[test]
fn a_cut_in_the_data_keeps_the_complete_events_and_says_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let gz = gzip(&plain_trace());
    let p = write(dir.path(), "half.json.gz", &gz[..gz.len() / 2]);
    let r = read(&p).unwrap();
    let cut = r.cut.expect("cut");
    assert_eq!(cut.gzip, Some(GzipCut::Data));
    assert!(r.events > 0 && cut.dropped_bytes > 0);
    let said = cut.describe(TimelineFormat::ChromeJson);
    assert!(
        said.starts_with("gzip stream cut short (writer killed?): "),
        "{said}"
    );
}

#[test]
fn a_gzip_file_cut_before_any_content_is_cut_not_empty() {
    let dir = tempfile::tempdir().unwrap();
    let gz = gzip(&plain_trace());
    for len in [2, 9, 10, 12, 20] {
        let p = write(dir.path(), "c.json.gz", &gz[..len]);
        let r = read(&p).unwrap();
        assert_eq!(r.events, 0, "cut at {len}");
        let cut = r.cut.unwrap_or_else(|| panic!("cut at {len} not seen"));
        let want = if len < 10 {
            "gzip stream cut short in a member's header (writer killed?): no trace events"
        } else {
            "gzip stream cut short (writer killed?): no trace events before the cut"
        };
        assert_eq!(cut.describe_empty(), want, "cut at {len}");
    }
}

#[test]
fn bytes_after_the_gzip_data_are_one_warning_whatever_their_number() {
    let dir = tempfile::tempdir().unwrap();
    let gz = gzip(&plain_trace());
    let whole = read(&write(dir.path(), "whole.gz", &gz)).unwrap();
    for (tail, what) in [
        (vec![0u8], "1 byte"),
        (vec![0u8; 8], "8 bytes"),
        (vec![0u8; 100], "100 bytes"),
        (b"junk".repeat(25), "100 bytes"),
    ] {
        let mut bytes = gz.clone();
        bytes.extend_from_slice(&tail);
        let r = read(&write(dir.path(), "t.json.gz", &bytes)).unwrap();
        assert_eq!(r.events, whole.events);
        assert!(r.cut.is_none());
        let kind = if tail[0] == 0 {
            "zero bytes"
        } else {
            "no gzip member"
        };
        assert_eq!(
            r.warnings,
            [format!(
                "{what} after the end of the gzip data at byte {} ({kind}); ignored",
                gz.len()
            )]
        );
        // Read as a stream (a pipe) it is the same.
        let s = timeline::read_bytes(&bytes, Path::new("-"), &mut ()).unwrap();
        assert_eq!((s.events, s.warnings), (whole.events, r.warnings));
    }
    // Two members are one stream: no warning.
    let text = plain_trace();
    let mut two = gzip(&text[..1000]);
    two.extend(gzip(&text[1000..]));
    let r = read(&write(dir.path(), "two.json.gz", &two)).unwrap();
    assert_eq!((r.events, r.warnings.len()), (whole.events, 0));
}

#[test]
fn a_corrupt_member_is_one_gzip_error() {
    let dir = tempfile::tempdir().unwrap();
    let gz = gzip(&plain_trace());
    let mut crc = gz.clone();
    let n = crc.len();
    crc[n - 8] ^= 0x55;
    let p = write(dir.path(), "crc.json.gz", &crc);
    let e = read(&p).err().expect("an error");
    assert_eq!(
        e,
        format!(
            "{}: gzip: corrupt gzip stream does not have a matching checksum",
            p.display()
        )
    );
    let mut second = gz.clone();
    second.extend_from_slice(b"\x1f\x8b\x08\x00not deflate data at all, not at all");
    let p = write(dir.path(), "second.json.gz", &second);
    let e = read(&p).err().expect("an error");
    assert!(
        e.starts_with(&format!("{}: gzip: ", p.display()))
            && e.ends_with(&format!("(member 2 at byte {})", gz.len())),
        "{e}"
    );
}
