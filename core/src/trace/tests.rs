//! The reader and the repair end to end on small traces: every read size,
//! every cut, every kind of error.

use std::borrow::Cow;
use std::io::{self, Read};
use std::path::Path;

use super::*;

/// A reader that hands out at most `n` bytes per read, to exercise the
/// refill/retry paths at every possible cut.
struct Trickle<'a> {
    data: &'a [u8],
    n: usize,
}
impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let k = self.n.min(out.len()).min(self.data.len());
        out[..k].copy_from_slice(&self.data[..k]);
        self.data = &self.data[k..];
        Ok(k)
    }
}

const TRACE: &[u8] = b"{ \"traceEvents\":[\n\
{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 7, \"ts\": 1719000000000000.250000, \"args\": {\"name\": \"RANK 0 HOST<n>\"}},\n\
{\"ph\": \"X\", \"tid\": 7, \"pid\": 7, \"name\": \"a\\\"b\\u00e9\", \"cat\": \"gpu_op\", \"ts\": 1719000000000010.500000, \"dur\": 3.250000, \"args\": {\"id\": \"57\"}}\n\
]\n}\n";

fn collect(reader: &mut TraceReader<impl Read>) -> Result<Vec<Vec<u8>>, TraceError> {
    let mut out = Vec::new();
    while let Some(e) = reader.next_event()? {
        out.push(e.raw().to_vec());
    }
    Ok(out)
}

#[test]
fn yields_raw_events_and_fields() {
    let mut r = TraceReader::new(TRACE);
    let e = r.next_event().unwrap().unwrap();
    assert_eq!(e.str(Field::Ph).as_deref(), Some("M"));
    assert_eq!(e.uint(Field::Pid), Some(7));
    assert_eq!(
        e.number_text(Field::Ts),
        Some(&b"1719000000000000.250000"[..])
    );
    let e = r.next_event().unwrap().unwrap();
    assert!(e.raw().starts_with(b"{\"ph\": \"X\""));
    assert!(e.raw().ends_with(b"\"57\"}}"));
    assert_eq!(e.str(Field::Name).as_deref(), Some("a\"b\u{e9}"));
    assert_eq!(e.decimal(Field::Dur).unwrap().to_string(), "3.250000");
    let args = e.value(Field::Args).unwrap();
    let id: Vec<_> = object_members(args).collect();
    assert_eq!(id[0].0, b"id");
    assert_eq!(&args[id[0].1.range()], b"\"57\"");
    assert!(r.next_event().unwrap().is_none());
    let s = r.summary();
    assert_eq!(s.events, 2);
    assert!(s.truncation.is_none());
    assert_eq!(s.form, Some(TraceForm::Object));
}

#[test]
fn same_events_whatever_the_read_size() {
    let whole = collect(&mut TraceReader::new(TRACE)).unwrap();
    for n in 1..40 {
        let mut r = TraceReader::new(Trickle { data: TRACE, n });
        assert_eq!(collect(&mut r).unwrap(), whole, "read size {n}");
    }
}

#[test]
fn truncated_at_every_byte_keeps_complete_events() {
    let second_end = TRACE.windows(6).position(|w| w == b"\"}}\n]\n").unwrap() + 3;
    let first_end = TRACE.windows(4).position(|w| w == b"}},\n").unwrap() + 2;
    for cut in 0..TRACE.len() - 3 {
        let input = &TRACE[..cut];
        let mut r = TraceReader::new(Trickle { data: input, n: 7 });
        let events = collect(&mut r).unwrap();
        let expect = if cut >= second_end {
            2
        } else if cut >= first_end {
            1
        } else {
            0
        };
        assert_eq!(events.len(), expect, "cut at {cut}");
        let s = r.summary();
        if cut == 0 {
            assert!(s.empty);
            continue;
        }
        let t = s.truncation.as_ref().expect("truncated");
        assert_eq!(t.kept_bytes + t.dropped_bytes, cut as u64);
        let rep = repaired_bytes(input).unwrap();
        assert_eq!(rep.events, expect as u64);
        let again = collect(&mut TraceReader::new(&rep.bytes[..])).unwrap();
        assert_eq!(again.len(), expect);
        let mut streamed = Vec::new();
        let report = repair_to(Trickle { data: input, n: 5 }, &mut streamed).unwrap();
        assert_eq!(streamed, rep.bytes.as_ref(), "cut at {cut}");
        assert_eq!(report.bytes_written, streamed.len() as u64);
    }
}

#[test]
fn repair_appends_closing_after_last_complete_event() {
    let cut = TRACE.windows(4).position(|w| w == b"}},\n").unwrap() + 2 + 30;
    let rep = repaired_bytes(&TRACE[..cut]).unwrap();
    assert_eq!(rep.events, 1);
    let t = rep.truncation.unwrap();
    assert!(t.partial_event);
    assert_eq!(t.dropped_bytes, 30);
    assert!(rep.bytes.ends_with(b"\"}}\n]\n}\n"));
    // A complete trace comes back borrowed and identical.
    let rep = repaired_bytes(TRACE).unwrap();
    assert!(matches!(rep.bytes, Cow::Borrowed(_)));
    let mut out = Vec::new();
    repair_to(TRACE, &mut out).unwrap();
    assert_eq!(out, TRACE);
}

#[test]
fn bare_array_form() {
    let input = b"[{\"ph\":\"X\",\"ts\":1},\n{\"ph\":\"X\",\"ts\":2}]";
    let mut r = TraceReader::new(&input[..]);
    assert_eq!(collect(&mut r).unwrap().len(), 2);
    assert_eq!(r.summary().form, Some(TraceForm::Array));
    // Chrome allows the closing ']' to be missing.
    let rep = repaired_bytes(&input[..input.len() - 1]).unwrap();
    assert_eq!(rep.events, 2);
    assert!(!rep.truncation.unwrap().partial_event);
    assert!(rep.bytes.ends_with(b"}\n]\n"));
}

fn err(input: &[u8]) -> TraceError {
    let mut r = TraceReader::new(input);
    collect(&mut r).unwrap_err()
}

#[test]
fn bad_inputs_give_positioned_errors() {
    let e = err(b"hello");
    assert!(matches!(e.kind, TraceErrorKind::NotJson(_)), "{e}");
    assert_eq!(e.line, Some(1));
    let e = err(b"{\"traceEvents\": [\n{\"a\": 1},\n42\n]}");
    assert!(
        matches!(e.kind, TraceErrorKind::EventNotObject { index: 1 }),
        "{e}"
    );
    assert_eq!(e.line, Some(3));
    let e = err(b"{\"traceEvents\": [\n{\"a\": \"\xff\"}]}");
    assert!(matches!(e.kind, TraceErrorKind::InvalidUtf8), "{e}");
    assert_eq!(e.line, Some(2));
    let e = err(b"{\"traceEvents\": [\n{\"args\": {, \"mpi_counter\": 3}}]}");
    assert!(matches!(e.kind, TraceErrorKind::Syntax(_)), "{e}");
    let e = err(b"{\"traceEvents\": 3}");
    assert!(matches!(e.kind, TraceErrorKind::TraceEventsNotArray), "{e}");
    let e = err(b"{\"traceEvents\": [{\"a\": 1},]}");
    assert!(matches!(e.kind, TraceErrorKind::Syntax(_)), "{e}");
    let e = err(b"{\"traceEvents\": [{\"a\": 01}]}");
    assert!(matches!(e.kind, TraceErrorKind::Syntax(_)), "{e}");
    assert_eq!(
        e.into_input_error(Path::new("r.json")).to_string(),
        "r.json:1: invalid JSON: expected ',' or '}', found '1'"
    );
}

#[test]
fn object_without_trace_events_and_extra_keys() {
    let mut r = TraceReader::new(&b"{\"otherData\": {\"x\": [1, 2]}}"[..]);
    assert!(collect(&mut r).unwrap().is_empty());
    assert!(!r.summary().has_trace_events);
    assert!(repaired_bytes(b"{\"otherData\": 1}").is_err());
    let input =
        b"{\"displayTimeUnit\": \"ns\", \"traceEvents\": [{\"ph\": \"X\"}], \"otherData\": {}}  x";
    let mut r = TraceReader::new(&input[..]);
    assert_eq!(collect(&mut r).unwrap().len(), 1);
    assert!(r.summary().trailing_data.is_some());
    let rep = repaired_bytes(input).unwrap();
    assert!(rep.bytes.ends_with(b"{}}\n"));
}

#[test]
fn long_line_needs_only_one_event_of_buffer() {
    // One line of 20 000 events (~600 KB) read with a 4 KiB limit: the
    // buffer never grows past the limit, whatever the line length.
    let mut line = b"{\"traceEvents\":[".to_vec();
    for i in 0..20_000 {
        if i > 0 {
            line.push(b',');
        }
        line.extend_from_slice(format!("{{\"ph\":\"X\",\"ts\":{i}.5}}").as_bytes());
    }
    line.extend_from_slice(b"]}");
    let mut r = TraceReader::with_max_event_bytes(&line[..], 4096);
    let mut n = 0;
    while r.next_event().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 20_000);
    assert!(r.buffer_capacity() <= 4097, "{}", r.buffer_capacity());
}

#[test]
fn event_over_the_limit_is_an_error() {
    let mut big = b"{\"traceEvents\":[{\"name\":\"".to_vec();
    big.extend(std::iter::repeat_n(b'x', 10_000));
    big.extend_from_slice(b"\"}]}");
    let mut r = TraceReader::with_max_event_bytes(&big[..], 4096);
    let e = collect(&mut r).unwrap_err();
    assert!(
        matches!(e.kind, TraceErrorKind::TooLong { limit: 4096 }),
        "{e}"
    );
    assert!(r.buffer_capacity() <= 4097);
    // The default limit accepts it.
    assert_eq!(collect(&mut TraceReader::new(&big[..])).unwrap().len(), 1);
}

/// Line numbers read again from the file ([`TraceReader::with_line_lookup`])
/// are those counted as the bytes go by: for errors on every line of a
/// trace, for traces cut at every byte and for data after the trace, read
/// in small pieces so that the line is often in bytes already discarded.
#[test]
fn looked_up_lines_are_the_counted_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    let mut cases: Vec<Vec<u8>> = Vec::new();
    for cut in 0..TRACE.len() {
        cases.push(TRACE[..cut].to_vec());
    }
    for (at, _) in TRACE
        .iter()
        .enumerate()
        .filter(|(_, &c)| c == b':' || c == b',')
    {
        let mut bad = TRACE.to_vec();
        bad[at] = b'?';
        cases.push(bad);
    }
    let mut trailing = TRACE.to_vec();
    trailing.extend_from_slice(b"\n\n  junk\n");
    cases.push(trailing);
    let read = |r: &mut TraceReader<Trickle<'_>>| {
        let events = collect(r).map_err(|e| (e.line, e.offset, e.to_string()));
        (events, r.summary().clone())
    };
    let mut with_lines = 0;
    for case in &cases {
        std::fs::write(&path, case).unwrap();
        let counted = read(&mut TraceReader::new(Trickle { data: case, n: 7 }));
        let p = path.clone();
        let mut looked = TraceReader::new(Trickle { data: case, n: 7 })
            .with_line_lookup(move |offset| line_of_offset(&p, offset));
        let looked = read(&mut looked);
        assert_eq!(looked, counted, "{:?}", String::from_utf8_lossy(case));
        let line = match &counted {
            (Err((line, _, _)), _) => *line,
            (Ok(_), s) => s
                .truncation
                .as_ref()
                .and_then(|t| t.line)
                .or(s.trailing_data.and_then(|t| t.0)),
        };
        with_lines += usize::from(line.is_some_and(|l| l > 1));
    }
    assert!(
        with_lines > 100,
        "{with_lines} cases with a line past the first"
    );
    // The file gone: no line rather than a wrong one.
    let gone = dir.path().join("gone.json");
    let bad = b"{\"traceEvents\":[\n{\"ph\" \"X\"}]}";
    let mut r = TraceReader::new(&bad[..]).with_line_lookup(move |o| line_of_offset(&gone, o));
    let e = collect(&mut r).unwrap_err();
    assert_eq!(e.line, None);
    assert_eq!(
        line_of_offset(dir.path().join("t.json").as_path(), u64::MAX),
        None
    );
}
