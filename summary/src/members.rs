//! Reading the members of a summary archive: which members are text
//! summaries, parsing one (whole or streamed), and the warnings a flawed
//! but usable member gets.

use std::io::{self, BufRead};

use unitrace_core::summary_tarball::Member;
use unitrace_core::summary_text::{parse_summary, MemberSummary, SummaryParser, MAX_LINE_BYTES};

/// What a worker makes of one member.
pub enum Parsed {
    /// A summary, with the line of the member's first byte that is not
    /// valid UTF-8 (read as U+FFFD).
    Summary(Box<MemberSummary>, Option<u64>),
    /// A side file of a `--result-dir` tree (trace JSON, metric CSV, …).
    SideFile,
    Binary,
    Bad(u64, String),
}

/// Result-dir files that hold no timing summary (docs/formats.md#result-dir).
pub fn is_side_file(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    let lower = base.to_ascii_lowercase();
    lower.ends_with(".json")
        || lower.ends_with(".csv")
        || matches!(
            base,
            "call_logging.txt" | "device_timeline.txt" | "run_config.json"
        )
}

pub fn parse_member(member: &Member) -> Parsed {
    if is_side_file(&member.path) {
        return Parsed::SideFile;
    }
    // A NUL byte in the first block means a binary file (summary.py aborts
    // with a decode error, docs/compatibility.md#summary-7).
    let head = &member.data[..member.data.len().min(8192)];
    if memchr::memchr(0, head).is_some() {
        return Parsed::Binary;
    }
    // Validating is cheaper than the lossy conversion; only damaged text
    // pays for the replacement characters.
    let (text, non_utf8) = match std::str::from_utf8(&member.data) {
        Ok(t) => (std::borrow::Cow::Borrowed(t), None),
        Err(e) => {
            let before = &member.data[..e.valid_up_to()];
            let line = memchr::memchr_iter(b'\n', before).count() as u64 + 1;
            (String::from_utf8_lossy(&member.data), Some(line))
        }
    };
    match parse_summary(&text) {
        Ok(s) => Parsed::Summary(Box::new(s), non_utf8),
        Err(e) => Parsed::Bad(e.line, e.problem),
    }
}

/// The warnings of one parsed member, each `LINE: problem` (once per kind,
/// at the first occurrence, with the count): the member is still used.
pub fn member_warnings(summary: &MemberSummary, non_utf8: Option<u64>) -> Vec<String> {
    let times = |n: u64| {
        if n == 1 {
            "once".to_string()
        } else {
            format!("{n} times")
        }
    };
    let mut out = Vec::new();
    if let Some(line) = non_utf8 {
        out.push(format!(
            "{line}: text is not valid UTF-8 (a kernel name in another encoding?); invalid bytes are read as U+FFFD"
        ));
    }
    if let Some(f) = summary.short_rows {
        out.push(format!(
            "{}: table row has fewer fields than its header (log cut mid-row?); the table ends there and its remaining rows are not counted ({} in this member)",
            f.first_line,
            times(f.count)
        ));
    }
    if let Some(f) = summary.negative_times {
        out.push(format!(
            "{}: negative \"Time (ns)\" is summed as read ({} in this member)",
            f.first_line,
            times(f.count)
        ));
    }
    out
}

/// Members above this size are parsed while they stream out of the archive
/// instead of being read whole (bounded memory for huge single-rank logs).
pub const STREAM_ABOVE: u64 = unitrace_core::summary_tarball::IN_FLIGHT_BYTES / 2;

/// [`parse_member`] for a member read line by line from the archive.
pub fn parse_member_stream(path: &str, reader: &mut dyn BufRead) -> Option<Parsed> {
    if is_side_file(path) {
        return Some(Parsed::SideFile);
    }
    let head = reader.fill_buf().ok()?;
    if memchr::memchr(0, &head[..head.len().min(8192)]).is_some() {
        return Some(Parsed::Binary);
    }
    let mut parser = SummaryParser::new();
    let mut non_utf8 = None;
    let mut buf = Vec::with_capacity(1 << 12);
    loop {
        match read_line_capped(reader, &mut buf) {
            Ok(false) => break,
            Ok(true) => {}
            // The archive layer reports the truncation with the member name.
            Err(_) => return Some(Parsed::SideFile),
        }
        let fed = match std::str::from_utf8(&buf) {
            Ok(line) => parser.feed(line),
            Err(_) => {
                non_utf8.get_or_insert(parser.lines() + 1);
                parser.feed(&String::from_utf8_lossy(&buf))
            }
        };
        if let Err(e) = fed {
            return Some(Parsed::Bad(e.line, e.problem));
        }
    }
    Some(match parser.finish() {
        Ok(s) => Parsed::Summary(Box::new(s), non_utf8),
        Err(e) => Parsed::Bad(e.line, e.problem),
    })
}

/// Reads the next line of `reader` into `buf` without its `\n`; false at
/// the end. A line longer than [`MAX_LINE_BYTES`] is cut after the cap + 1
/// bytes, which the parser refuses as too long: a huge line costs no more
/// memory than the cap (docs/formats.md#summary-text).
fn read_line_capped(reader: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<bool> {
    buf.clear();
    let mut any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(any);
        }
        any = true;
        let (used, ends) = match memchr::memchr(b'\n', chunk) {
            Some(at) => (at + 1, true),
            None => (chunk.len(), false),
        };
        let line_part = if ends { used - 1 } else { used };
        let room = (MAX_LINE_BYTES + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..line_part.min(room)]);
        reader.consume(used);
        if ends || buf.len() > MAX_LINE_BYTES {
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\n=== Device Timing Summary ===\n\n  Total Execution Time (ns): 99\r\n\n== L0 Backend ==\n\n Kernel, Calls, Time (ns)\n\"k\", 2, 30\n\"k\", 1, 5\n\n************\n\n";

    fn summary_of(p: Parsed) -> MemberSummary {
        match p {
            Parsed::Summary(s, _) => *s,
            _ => panic!("not a summary"),
        }
    }

    #[test]
    fn streamed_and_whole_members_parse_alike() {
        let whole = parse_member(&Member {
            index: 0,
            path: "output.1.0.txt".into(),
            data: LOG.as_bytes().to_vec(),
        });
        let mut reader = std::io::BufReader::with_capacity(7, LOG.as_bytes());
        let streamed = parse_member_stream("output.1.0.txt", &mut reader).unwrap();
        let (a, b) = (summary_of(whole), summary_of(streamed));
        assert_eq!(a, b);
        assert_eq!(a.reports[0].device.len(), 2);
        assert!(matches!(
            parse_member_stream("x.bin", &mut &b"ab\0cd"[..]),
            Some(Parsed::Binary)
        ));
        assert!(matches!(
            parse_member_stream("res/p.1/chrome_trace.json", &mut &b"{}"[..]),
            Some(Parsed::SideFile)
        ));
    }

    #[test]
    fn first_non_utf8_line_is_found_whole_and_streamed() {
        // A Latin-1 `é` in the kernel name of line 10 of LOG.
        let data: Vec<u8> = LOG
            .replace("\"k\", 1, 5", "\"k\u{1}\", 1, 5")
            .bytes()
            .map(|b| if b == 1 { 0xe9 } else { b })
            .collect();
        let whole = parse_member(&Member {
            index: 0,
            path: "output.1.0.txt".into(),
            data: data.clone(),
        });
        let mut reader = std::io::BufReader::with_capacity(7, &data[..]);
        let streamed = parse_member_stream("output.1.0.txt", &mut reader).unwrap();
        for parsed in [whole, streamed] {
            match parsed {
                Parsed::Summary(_, line) => assert_eq!(line, Some(10)),
                _ => panic!("not a summary"),
            }
        }
    }

    #[test]
    fn streamed_lines_are_cut_after_the_cap() {
        let long = format!("a\n{}\nb", "y".repeat(MAX_LINE_BYTES + 5000));
        let mut reader = std::io::BufReader::with_capacity(4096, long.as_bytes());
        let mut buf = Vec::new();
        assert!(read_line_capped(&mut reader, &mut buf).unwrap());
        assert_eq!(buf, b"a");
        assert!(read_line_capped(&mut reader, &mut buf).unwrap());
        assert_eq!(buf.len(), MAX_LINE_BYTES + 1);
        let mut short = std::io::BufReader::with_capacity(3, &b"12345\r\n\nz"[..]);
        let mut lines = Vec::new();
        while read_line_capped(&mut short, &mut buf).unwrap() {
            lines.push(String::from_utf8(buf.clone()).unwrap());
        }
        assert_eq!(lines, ["12345\r", "", "z"]);
        match parse_member_stream("output.1.txt", &mut long.as_bytes()) {
            Some(Parsed::Bad(2, problem)) => assert!(problem.starts_with("line longer than 1 MiB")),
            _ => panic!("a long line must be refused"),
        }
    }
}
