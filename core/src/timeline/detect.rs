//! What a file is, by its content, never by its name
//! (docs/formats.md#timeline-detection): gzip of anything below, a Chrome
//! trace JSON object or array (leading blanks and a UTF-8 byte-order mark
//! skipped; a Kineto trace told apart from unitrace's by its top-level keys
//! and categories), a `.pftrace` protobuf; and, for a one-line error that
//! says what the user gave instead, the other files unitrace writes.

/// How much of a file detection looks at (after decompression).
pub const HEAD_BYTES: usize = 64 << 10;

/// The dialect of a Chrome trace JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonDialect {
    /// unitrace's (and any other Chrome trace's) vocabulary:
    /// docs/formats.md#trace-json-events.
    Unitrace,
    /// PyTorch profiler (Kineto) traces: docs/formats.md#kineto-json.
    Kineto,
}

/// What the first bytes of a file say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    /// gzip: look again at the decompressed bytes.
    Gzip,
    Json(JsonDialect),
    Pftrace,
    /// No byte, or only blanks.
    Empty,
    /// Not a trace; what it looks like instead.
    Other(&'static str),
}

/// gzip's magic bytes.
pub fn is_gzip(head: &[u8]) -> bool {
    head.starts_with(&[0x1f, 0x8b])
}

/// Detects the format of a file from its first bytes (up to
/// [`HEAD_BYTES`]; fewer when the file is shorter).
pub fn sniff(head: &[u8]) -> Sniffed {
    if is_gzip(head) {
        return Sniffed::Gzip;
    }
    let text = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let blank = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let start = text.iter().position(|c| !blank(c));
    // JSON first: a blank-led JSON file starts with 0x0a, the tag of a
    // `.pftrace` record, and must not be taken for one.
    match start.map(|i| text[i]) {
        None if head.is_empty() || head.iter().all(blank) => return Sniffed::Empty,
        Some(b'{') | Some(b'[') => return Sniffed::Json(json_dialect(text)),
        _ => {}
    }
    if crate::pftrace::sniff(head) {
        return Sniffed::Pftrace;
    }
    Sniffed::Other(other_kind(head, &text[start.unwrap_or(0)..]))
}

/// Kineto writes `schemaVersion`, `deviceProperties`, `distributedInfo`
/// before its events and categories unitrace never uses.
fn json_dialect(head: &[u8]) -> JsonDialect {
    const KINETO_MARKS: &[&[u8]] = &[
        b"\"schemaVersion\"",
        b"\"deviceProperties\"",
        b"\"distributedInfo\"",
        b"\"cat\": \"kernel\"",
        b"\"cat\":\"kernel\"",
        b"\"cat\": \"cuda_runtime\"",
        b"\"cat\": \"python_function\"",
        b"\"cat\": \"user_annotation\"",
        b"\"cat\": \"gpu_memcpy\"",
        b"\"cat\": \"ac2g\"",
    ];
    let finder = |m: &&[u8]| memchr::memmem::find(head, m).is_some();
    if KINETO_MARKS.iter().any(finder) {
        JsonDialect::Kineto
    } else {
        JsonDialect::Unitrace
    }
}

/// What a file that is not a trace looks like, for the error message.
fn other_kind(head: &[u8], text: &[u8]) -> &'static str {
    if text.starts_with(b"=== ") || text.starts_with(b"Kernel,") {
        let stall = memchr::memmem::find(head, b"IP[Address]").is_some();
        return if stall {
            "a stall-sampling CSV (unitrace --stall-sampling)"
        } else {
            "a metric CSV (unitrace -k/-q)"
        };
    }
    if head.len() > 262 && &head[257..262] == b"ustar" {
        return "a tar archive";
    }
    if head.starts_with(b"PK\x03\x04") {
        return "a zip archive";
    }
    if head.starts_with(b"PAR1") {
        return "a Parquet file";
    }
    if head.starts_with(b"%PDF") {
        return "a PDF document";
    }
    if text.starts_with(b"<") {
        return "an HTML or XML document";
    }
    let summary_marks: &[&[u8]] = &[
        b"Total Execution Time",
        b"API Timing",
        b"Device Timing",
        b"Total Device Time",
    ];
    if summary_marks
        .iter()
        .any(|m| memchr::memmem::find(head, m).is_some())
    {
        return "a unitrace text report";
    }
    if head
        .iter()
        .all(|&c| c >= 0x20 || matches!(c, b'\n' | b'\r' | b'\t'))
    {
        "text that is neither trace JSON nor .pftrace"
    } else {
        "binary data that is neither a .pftrace nor gzip"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_with_leading_blanks_is_json_not_pftrace() {
        assert_eq!(
            sniff(b"\n{ \"schemaVersion\": 1, \"traceEvents\": []}"),
            Sniffed::Json(JsonDialect::Kineto)
        );
        assert_eq!(
            sniff(b"\xEF\xBB\xBF  [{\"ph\": \"X\"}]"),
            Sniffed::Json(JsonDialect::Unitrace)
        );
        assert_eq!(
            sniff(b"{ \"traceEvents\":[\n{\"ph\": \"X\", \"cat\": \"gpu_op\"}"),
            Sniffed::Json(JsonDialect::Unitrace)
        );
    }

    #[test]
    fn other_files_say_what_they_are() {
        assert_eq!(sniff(b""), Sniffed::Empty);
        assert_eq!(sniff(b" \n"), Sniffed::Empty);
        assert_eq!(sniff(&[0x1f, 0x8b, 8, 0]), Sniffed::Gzip);
        let metric = b"\n=== Device #0 Metrics ===\n\nKernel, GlobalInstanceId, GpuTime[ns]\n";
        assert_eq!(
            sniff(metric),
            Sniffed::Other("a metric CSV (unitrace -k/-q)")
        );
        let stall = b"\n=== Device #0 Metrics ===\n\n   Kernel, IP[Address], Active[Events]\n";
        assert!(matches!(sniff(stall), Sniffed::Other(s) if s.starts_with("a stall")));
        assert_eq!(sniff(b"PAR1\x15\x04"), Sniffed::Other("a Parquet file"));
        assert!(matches!(sniff(b"hello"), Sniffed::Other(s) if s.starts_with("text")));
    }

    #[test]
    fn a_pftrace_record_is_pftrace() {
        use crate::pftrace::{fields, PacketBuilder};
        let rec = PacketBuilder::new()
            .varint(fields::PACKET_TIMESTAMP, 5)
            .record();
        assert_eq!(sniff(&rec), Sniffed::Pftrace);
    }
}
