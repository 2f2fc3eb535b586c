//! The stage-1/stage-2 fast path of the JSON trace scanner
//! (docs/benchmarks.md#the-json-trace-scanner) against the byte parser it
//! sits on (`ScanKernel::Reference`): for every input, every kernel must
//! yield the same events (bytes, offsets, field spans, decoded strings),
//! the same error (problem, line, offset) or the same summary (truncation,
//! trailing data), whether the input is read whole or in small pieces.
//! Inputs: hand-made events placed at every offset of a 64-byte block
//! (strings, escapes, backslash runs, UTF-8 and numbers across block
//! boundaries), and a fixed-seed generator of random traces plus random
//! mutations of them.

use std::io::Read;

use unitrace_core::trace::{Field, ScanKernel, TraceReader};

const FIELDS: [Field; 9] = [
    Field::Ph,
    Field::Name,
    Field::Cat,
    Field::Pid,
    Field::Tid,
    Field::Ts,
    Field::Dur,
    Field::Id,
    Field::Args,
];

/// Hands out at most `n` bytes per read.
struct Trickle<'a> {
    data: &'a [u8],
    n: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let k = self.n.min(out.len()).min(self.data.len());
        out[..k].copy_from_slice(&self.data[..k]);
        self.data = &self.data[k..];
        Ok(k)
    }
}

/// Everything a scan shows, as text to compare; and how many events the
/// fast path took.
fn outcome(src: impl Read, kernel: ScanKernel, max_event: usize) -> (String, u64) {
    outcome_of(TraceReader::with_kernel(src, max_event, kernel))
}

fn outcome_of<R: Read>(mut r: TraceReader<R>) -> (String, u64) {
    let mut out = String::new();
    loop {
        match r.next_event() {
            Ok(Some(ev)) => {
                out += &format!(
                    "event {} at {}: {:?}\n",
                    ev.index(),
                    ev.offset(),
                    String::from_utf8_lossy(ev.raw())
                );
                for f in FIELDS {
                    out += &format!("  {f:?} {:?} {:?}\n", ev.fields().span(f), ev.str(f));
                }
            }
            Ok(None) => {
                out += &format!("end {:?}\n", r.summary());
                break;
            }
            Err(e) => {
                out += &format!(
                    "error {:?} line {:?} offset {}\n",
                    e.problem(),
                    e.line,
                    e.offset
                );
                break;
            }
        }
    }
    (out, r.fast_path_events())
}

/// Checks every kernel against the reference on `input`, whole and in
/// pieces; returns the events the best kernel's fast path took.
fn check(input: &[u8]) -> u64 {
    let (want, _) = outcome(input, ScanKernel::Reference, 1 << 20);
    // Read in pieces, the reference itself may stop reading at another
    // byte (trailing data), so each piece size has its own reference.
    let pieces = [1, 7, 64, 100];
    let want_pieces: Vec<String> = pieces
        .iter()
        .map(|&n| outcome(Trickle { data: input, n }, ScanKernel::Reference, 1 << 20).0)
        .collect();
    let mut fast = 0;
    for kernel in ScanKernel::available() {
        let (got, n) = outcome(input, kernel, 1 << 20);
        assert_eq!(
            got,
            want,
            "{} on {:?}",
            kernel.name(),
            String::from_utf8_lossy(input)
        );
        if kernel == ScanKernel::best() {
            fast = n;
        }
        for (&piece, want) in pieces.iter().zip(&want_pieces) {
            let (got, _) = outcome(
                Trickle {
                    data: input,
                    n: piece,
                },
                kernel,
                1 << 20,
            );
            assert_eq!(
                &got,
                want,
                "{} reading {piece} bytes at a time on {:?}",
                kernel.name(),
                String::from_utf8_lossy(input)
            );
        }
    }
    // A small event limit errs the same way.
    let (want, _) = outcome(input, ScanKernel::Reference, 96);
    let (got, _) = outcome(input, ScanKernel::best(), 96);
    assert_eq!(
        got,
        want,
        "limit 96 on {:?}",
        String::from_utf8_lossy(input)
    );
    fast
}

/// Events that put what stage 1 must get right at block boundaries.
const TRICKY_EVENTS: &[&str] = &[
    // Events the fast path takes first; from the exponents on, it hands
    // them to the byte parser (and backs off for a few events).
    r#"{"ph": "X", "name": "a long kernel name that runs over a block boundary for sure", "ts": 1733400002184141.500000, "dur": 2.601000}"#,
    "{\"name\": \"caf\u{e9} \u{1F600} \u{4e2d}\u{6587}\", \"pid\": 7}",
    r#"{"args": {"a": [1, 2.5, {"b": null}, [], {}], "t": true, "f": false}, "ph": "i"}"#,
    r#"{}"#,
    r#"{"args": {}, "name": ""}"#,
    r#"{ "ph" : "X" , "ts" : 17 , "args" : [ ] }"#,
    "{\"ph\":\"X\",\n\t\"ts\":\r\n5}",
    r#"{"name": "x", "name": "y", "ts": 1, "ts": 2}"#,
    r#"{"ts": -0.5, "dur": 0, "id": 12345678901234567890, "pid": 1e3, "tid": -2E-7}"#,
    r#"{"name": "esc \" quote", "ts": 1}"#,
    r#"{"name": "run \\\\", "ts": 2}"#,
    r#"{"name": "run \\\\\" still inside", "ts": 3}"#,
    r#"{"name": "\\", "cat": "\u00e9\ud83d\ude00", "ts": 4}"#,
];

/// Members in the shapes the walker reads from the bytes (a key of up to 5
/// bytes with its quotes and colon as one word, `, "` after a value) and
/// near misses of them; all valid and without escapes, so the fast path
/// must take every one. Placed at every offset of a block, each key, value
/// and separator is split across two blocks (and, read in pieces, across
/// two reads) somewhere.
const KEY_EVENTS: &[&str] = &[
    // unitrace's own shapes
    r#"{"ph": "X", "tid": 100024, "pid": 100024, "name": "zeKernelSetArgumentValue", "cat": "cpu_op", "ts": 1733400003461146.000000, "dur": 0.390000, "id": 0}"#,
    r#"{"ph": "M", "name": "thread_name", "pid": 4294967295, "tid": 4294967295, "ts": 1733400002274160.500000, "args": {"name": "Thread 100024 L0 Copy Engine<1,0>"}}"#,
    r#"{"ph": "X", "tid": 1, "pid": 1, "name": "k", "cat": "gpu_op", "ts": 2.5, "dur": 2.601000, "args": {"id": "1"}}"#,
    // near misses of the recorded keys, and keys of 0 to 7 bytes
    r#"{"nam": "a", "names": "b", "name": "c", "nams": 1, "n": 2, "": 3, "ph5": "d", "phase": "e", "tsx": 4, "idx": 5, "argss": 6, "pidtid": 7, "durdur1": 8}"#,
    // blanks around the colon and the comma
    r#"{"name" : "a", "ts" :1, "pid":2, "tid":  3, "dur":-4.5, "cat":"c" , "id":	9,
"args":{} }"#,
    r#"{"id": 0,"ph": "b","ts": 5 ,"pid": 1 }"#,
    r#"{"ph": "X",  "name": "x",	"ts": 1,
 "dur": 2}"#,
    // duplicate keys: the last one wins
    r#"{"ts": 1, "ts": 2, "name": "a", "name": "b", "args": {"x": 1}, "args": {}, "ts": 3}"#,
    // keys holding what looks like JSON syntax
    r#"{"a:b": 1, "{}": 2, ":": ":", ",": ", ", "[": "]", "\"": 3}"#,
    // short keys in nested objects, literals and containers as values
    r#"{"args": {"name": "x", "id": "1", "bp": [1, "a"], "sixchr": 1, "q": {"r": {}}}, "ph": "i"}"#,
    r#"{"ph": true, "name": null, "cat": false, "ts": [], "args": {"a": true, "b": [null]}}"#,
    r#"{"ph": "X", "dur": 0, "ts": -0, "pid": 0.5, "tid": 12345678901234567890, "id": -1.000000}"#,
    r#"{"ph":"X","name":"","ts":1,"args":{"id":"7"}}"#,
    // the walker guesses each key from the one before it (the last order
    // seen): orders that break the guess with a near miss of it
    r#"{"ph": "X", "name": "a", "ts": 1}"#,
    r#"{"ph": "X", "names": "a", "ts": 1}"#,
    r#"{"ph": "X", "nam": "a", "tsx": 1, "ts": 2}"#,
    r#"{"ph": "X", "name" : "a", "ts":1}"#,
    r#"{"ph": "X", "name":"a", "ts": 1}"#,
    r#"{"ph": "X", "name": "a", "t": 1, "ts": 2}"#,
    r#"{"pid": 1, "ph": "X", "name": "a", "ts": 3}"#,
];

/// Invalid or odd events: the fast path must hand them to the byte parser.
const BAD_EVENTS: &[&str] = &[
    r#"{"ts": 01}"#,
    r#"{"ts": 1.}"#,
    r#"{"ts": 1x}"#,
    r#"{"ts": tru}"#,
    r#"{"ts": truex}"#,
    r#"{"a" 1}"#,
    r#"{"a":: 1}"#,
    r#"{"a": 1,}"#,
    r#"{"a": [1,]}"#,
    r#"{"a": [1 2]}"#,
    r#"{"a": {"b"}}"#,
    r#"{"a": 1 "b": 2}"#,
    r#"{"a": "b" "c"}"#,
    r#"{"a": }"#,
    r#"{"a": ]}"#,
    r#"{"a": [}"#,
    r#"{"a": {]}"#,
    r#"{,"a": 1}"#,
    r#"{"a": "bad \q escape"}"#,
    r#"{"a": "bad \u12g4"}"#,
    "{\"a\": \"tab\tinside\"}",
    "{\"a\": \"\u{1}\"}",
    "{\"a\": 1\u{1}}",
    "{\"a\": \"\u{e9}\"}",
    "{\"a\u{1a}\": 1}",
    "{\"a\": 1 \u{1a}}",
    "{\"a\": -}",
    "{\"a\": 1e}",
    "{\"a\": \"x\"}x",
    // near misses of the shapes read from the bytes
    r#"{"ph": "X", "ts": 1,}"#,
    r#"{"ph": "X" "ts": 1}"#,
    r#"{"ph": "X", "ts": 1 2}"#,
    r#"{"ph": "X", , "ts": 2}"#,
    r#"{"ph": "X",, "ts": 2}"#,
    r#"{"ph": "X", "}"#,
    r#"{"ph": "X", "ts"}"#,
    r#"{"ph": "X", "ts": }"#,
    r#"{"ph":: "X"}"#,
    r#"{"ph": "X", "ts": 1.5.5}"#,
    r#"{"ph": "X", "ts": 1-}"#,
    r#"{"ph": "X", "ts": 01}"#,
    r#"{"ph": "X", "ts": 1]"#,
    r#"{"ph": "X", "ts": 1, "args": {"id": "1",}}"#,
    r#"{"ph": "X", "ts": 1, "args": {"id" "1"}}"#,
    r#"{"ph\": 1}"#,
    r#"{"ph": "\"", "ts": 1}"#,
    r#"{"ph": "X", "t\"": 1}"#,
    "{\"ph\u{0}\": 1}",
    "{\"ph\": \"X\", \"ts\": 1,\u{c}\"dur\": 2}",
    "{\"ph\": \"X\",\u{1a} \"ts\": 1}",
    "{\"ph\": \"X\"\u{1}, \"ts\": 1}",
];

fn trace_of(events: &[&[u8]], pad: usize) -> Vec<u8> {
    let mut t = b"{\"traceEvents\": [\n".to_vec();
    for (k, e) in events.iter().enumerate() {
        if k > 0 {
            t.extend_from_slice(b",\n");
        }
        t.extend(std::iter::repeat_n(b' ', pad));
        t.extend_from_slice(e);
    }
    t.extend_from_slice(b"\n]\n}\n");
    t
}

#[test]
fn tricky_events_at_every_block_offset_agree_with_the_byte_parser() {
    let mut fast = 0;
    for pad in 0..=130 {
        let events: Vec<&[u8]> = TRICKY_EVENTS.iter().map(|e| e.as_bytes()).collect();
        let input = trace_of(&events, pad);
        fast += check(&input);
        // Cut inside the last events too: truncation at every offset.
        if pad % 13 == 0 {
            for cut in (input.len() - 400..input.len()).step_by(3) {
                check(&input[..cut]);
            }
        }
    }
    // The first eight events are taken by the fast path at every offset.
    assert!(fast >= 131 * 8, "fast path took only {fast} events");
}

#[test]
fn short_keys_and_separators_at_every_block_offset_agree_with_the_byte_parser() {
    let events: Vec<&[u8]> = KEY_EVENTS.iter().map(|e| e.as_bytes()).collect();
    let mut fast = 0;
    for pad in 0..=130 {
        let input = trace_of(&events, pad);
        fast += check(&input);
        if pad % 11 == 0 {
            for cut in (input.len() - 300..input.len()).step_by(2) {
                check(&input[..cut]);
            }
        }
    }
    // One event holds an escape (the key `"\""`): it goes to the byte
    // parser (the back-off after that miss may send the next one too);
    // the fast path takes every other one.
    assert!(
        fast >= 131 * (KEY_EVENTS.len() - 2) as u64,
        "fast path took only {fast} events"
    );
}

/// Each event alone at every offset, so that no back-off from an earlier
/// miss hides it; events with the shapes of KEY_EVENTS but one byte
/// changed, and the fields the fast path records for them.
#[test]
fn one_byte_changes_of_short_key_events_agree_with_the_byte_parser() {
    let base = KEY_EVENTS[0].as_bytes();
    for at in 0..base.len() {
        for with in [b'"', b',', b':', b' ', b'}', b'x', b'1', b'\\', 0x01, 0xC3] {
            let mut e = base.to_vec();
            e[at] = with;
            for pad in [0, 27, 60, 63] {
                check(&trace_of(&[&e], pad));
            }
        }
    }
}

/// Events in unitrace's shapes (the direct walk's: `"key": value` with
/// keys of up to 5 bytes, strings, numbers without exponent, one object
/// level, `, ` between members).
const UNITRACE_EVENTS: &[&str] = &[
    r#"{"ph": "X", "tid": 4294967295, "pid": 4294967295, "name": "zeCommandListAppendMemoryFill(D)[1048576]", "cat": "gpu_op", "ts": 1733400002184141.500000, "dur": 2.601000, "args": {"id": "1"}}"#,
    r#"{"ph": "t", "tid": 4294967295, "pid": 4294967295, "name": "dep", "cat": "Flow_H2D_1_0", "ts": 1733400002184141.500000, "id": 1}"#,
    r#"{"ph": "M", "name": "process_name", "pid": 100024, "ts": 1733400001315338.500000, "args": {"name": "RANK 0 HOST<x1007c0s0b0n0>"}}"#,
];

/// The number of the `ts` member of a unitrace event replaced.
fn with_ts(number: &str) -> Vec<u8> {
    format!(r#"{{"ph": "X", "pid": 7, "ts": {number}, "dur": {number}, "name": "k"}}"#).into_bytes()
}

/// Numbers for the direct walk's guess of a number's shape: every pair
/// (the first twice, so that it becomes the guess, then the second) must
/// agree with the byte parser; near misses of a shape (a leading zero, a
/// second `.`, an exponent, one more digit) and lengths around its 32-byte
/// window.
#[test]
fn number_shape_guesses_agree_with_the_byte_parser() {
    let long = |n: usize| "1".repeat(n);
    let mut numbers: Vec<String> = [
        "0",
        "7",
        "15",
        "05",
        "00",
        "-5",
        "-05",
        "-0",
        "-",
        "1.5",
        "1.",
        "0.5",
        "00.5",
        "01.5",
        "1.5.3",
        "1.5e3",
        "1e3",
        "15E3",
        "1.55",
        "12.5",
        "2.601000",
        "1733400002184141.500000",
        "1733400002184141.5000000",
        "1x",
        "1-",
        "--1",
        "1.-5",
        "9.9",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for n in [29, 30, 31, 32, 33] {
        numbers.push(long(n));
        numbers.push(format!("{}.5", long(n - 2)));
        numbers.push(format!("-{}", long(n - 1)));
    }
    // `-?(0|[1-9][0-9]*)(\.[0-9]+)?` of at most 31 bytes: the shapes the
    // direct walk takes (the byte after the number is in its window).
    let direct_shape = |n: &str| {
        let int = n.strip_prefix('-').unwrap_or(n);
        let (int, frac) = int.split_once('.').unwrap_or((int, "1"));
        let digits = |d: &str| !d.is_empty() && d.bytes().all(|c| c.is_ascii_digit());
        n.len() <= 31 && digits(int) && digits(frac) && (int == "0" || !int.starts_with('0'))
    };
    for a in &numbers {
        for b in &numbers {
            for pad in [0, 45] {
                let (a_event, b_event) = (with_ts(a), with_ts(b));
                let input = trace_of(&[&a_event, &a_event, &b_event, &a_event, &a_event], pad);
                check(&input);
                // The last event is too near the end of the bytes for the
                // direct walk's windows: the token walker takes it.
                if direct_shape(a) && direct_shape(b) {
                    assert_eq!(direct_events(&input), 4, "{a} then {b}");
                }
            }
        }
    }
}

/// Strings of 0 to 70 bytes with a byte the direct walk must not vouch for
/// (or must check as UTF-8) at places around its 16-byte steps.
#[test]
fn strings_around_the_direct_walks_steps_agree_with_the_byte_parser() {
    let clean = UNITRACE_EVENTS[1].as_bytes();
    let odd: [&[u8]; 9] = [
        b"\\",
        b"\\\"",
        b"\x01",
        b"\x1f",
        b"\x7f",
        b"\xc3",
        "\u{e9}".as_bytes(),
        b"\xff",
        b"\"",
    ];
    for len in 0..=70usize {
        let mut places: Vec<usize> = vec![0, len / 2, 14, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64];
        places.retain(|&k| k < len.max(1));
        places.dedup();
        for &at in &places {
            for o in odd {
                let mut s = vec![b'a'; len];
                if len > 0 {
                    s.splice(at..at + 1, o.iter().copied());
                }
                let mut e = br#"{"ph": "X", "name": ""#.to_vec();
                e.extend_from_slice(&s);
                e.extend_from_slice(br#"", "ts": 1.5}"#);
                for pad in [0, 33] {
                    check(&trace_of(&[clean, &e, clean], pad));
                }
            }
        }
    }
}

/// unitrace events with one byte changed, after two clean copies (so that
/// the direct walk's key and number guesses are those of the clean event
/// and each changed byte meets a guess), and key orders and blanks that
/// change from event to event.
#[test]
fn changed_bytes_under_the_direct_walks_guesses_agree_with_the_byte_parser() {
    for clean in UNITRACE_EVENTS {
        let clean = clean.as_bytes();
        for at in 0..clean.len() {
            for with in [
                b'"', b',', b':', b' ', b'}', b'{', b'x', b'1', b'0', b'.', b'-', b'e', b'\\',
                0x00, 0x01, 0xC3,
            ] {
                let mut e = clean.to_vec();
                e[at] = with;
                check(&trace_of(&[clean, clean, &e, clean], 0));
            }
        }
    }
    let flips: [&[u8]; 8] = [
        br#"{"ph": "X", "ts": 1, "name": "a"}"#,
        br#"{"ph": "X", "ts":1, "name": "a"}"#,
        br#"{"ph": "X", "ts":  1, "name": "a"}"#,
        br#"{"ph": "X", "name": "a", "ts": 1}"#,
        br#"{"ph": "X", "tsx": 1, "name": "a"}"#,
        br#"{"ph": "X", "args": {"ts": 1, "ph": "a"}, "ts": 2}"#,
        br#"{"ph": "X", "args": {"a": {"b": 1}}, "ts": 2}"#,
        br#"{"ph": "X", "abcde": 1, "abcde":2}"#,
    ];
    for a in flips {
        for b in flips {
            for pad in [0, 50] {
                check(&trace_of(&[a, a, b, a, b], pad));
            }
        }
    }
    let events: Vec<&[u8]> = UNITRACE_EVENTS.iter().map(|e| e.as_bytes()).collect();
    for pad in 0..=64 {
        let input = trace_of(&events, pad);
        check(&input);
        assert_eq!(direct_events(&input), events.len() as u64);
    }
}

/// Events in Kineto's shapes (PyTorch profiler, docs/formats.md#kineto-json):
/// short keys in the event, an `args` object with long keys, arrays
/// (nested, empty, of strings), `null` and negative or fractional numbers;
/// the direct walk takes them all, indented as Kineto writes them.
const KINETO_EVENTS: &[&str] = &[
    r#"{"ph": "X", "cat": "cpu_op", "name": "MseLossBackward0", "pid": 2815, "tid": 3377, "ts": 4907494922723.236, "dur": 138.46, "args": {"External id": 514, "Sequence number": 77, "Fwd thread id": 1, "Record function id": 0, "Concrete Inputs": [""], "Input type": ["float"], "Input Strides": [[]], "Input Dims": [[]], "Ev Idx": 1}}"#,
    r#"{"ph": "X", "cat": "python_function", "name": "<string>(1): <module>", "pid": 2815, "tid": 2815, "ts": 4907494919204.654, "dur": 34584.203, "args": {"Python parent id": null, "Python id": 1, "Ev Idx": 1180}}"#,
    r#"{"ph": "f", "id": 1, "pid": 2815, "tid": 3377, "ts": 4907494922723.236, "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"}"#,
    r#"{"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm", "pid": 0, "tid": 7, "ts": 4907494920908.721, "dur": 347.134, "args": {"External id": 17, "queued": 0, "device": 0, "blocks per SM": 1.939394, "grid": [16, 16, 1], "block": [128,1,-1], "est. achieved occupancy %": 12, "flag": true, "off": false}}"#,
    r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 2815, "tid": 3377, "ts": 4907494922956.563, "dur": 57.032, "args": {"Input Dims": [[64, 128], [128, 256], []], "Input type": ["float", "c10::Half", ""], "nested": [[[[1]]]], "none": null}}"#,
];

/// Kineto events with one byte changed, after two clean copies (the direct
/// walk's guesses are those of the clean event), indented as Kineto writes
/// them; and the clean events, which the direct walk takes (but for the
/// last of the buffer).
#[test]
fn kineto_events_and_their_one_byte_changes_agree_with_the_byte_parser() {
    let events: Vec<&[u8]> = KINETO_EVENTS.iter().map(|e| e.as_bytes()).collect();
    // One more event at the end: the last one of a buffer is too close
    // to its end for the direct walk's windows.
    let mut more = events.clone();
    more.push(events[2]);
    for pad in [2, 0, 31, 64] {
        let input = trace_of(&more, pad);
        check(&input);
        assert!(direct_events(&input) >= events.len() as u64, "pad {pad}");
    }
    // As Kineto lays them out: members on indented lines, `args` on lines
    // of their own, `,"` without a blank; the direct walk takes them too.
    let indented: Vec<Vec<u8>> = KINETO_EVENTS
        .iter()
        .map(|e| {
            e.replacen("{", "{\n    ", 1)
                .replace(", \"ts\"", ",\n    \"ts\"")
                .replace(", \"args\": {", ",\n    \"args\": {\n      ")
                .replace(", \"Sequence", ",\"Sequence")
                .replace("}}", "\n    }\n  }")
                .into_bytes()
        })
        .collect();
    let mut more: Vec<&[u8]> = indented.iter().map(Vec::as_slice).collect();
    more.push(events[2]);
    for pad in [2, 0, 31, 64] {
        let input = trace_of(&more, pad);
        check(&input);
        assert!(
            direct_events(&input) >= events.len() as u64,
            "indented, pad {pad}: {}",
            String::from_utf8_lossy(&input)
        );
    }
    for e in &indented {
        for at in 0..e.len() {
            if !e[at].is_ascii_whitespace() && e[at] != b',' {
                continue;
            }
            for with in [b'x', b'\t', b'\r', b',', b'}', 0x0C, 0xA0] {
                let mut m = e.clone();
                m[at] = with;
                check(&trace_of(&[e, e, &m, e], 2));
            }
        }
    }
    // The bytes from `"args"` on (those before are unitrace's shapes,
    // changed byte by byte in the tests above).
    for clean in &events {
        let Some(args) = clean.windows(6).position(|w| w == b"\"args\"") else {
            continue;
        };
        for at in args..clean.len() {
            for with in [
                b'"', b',', b':', b' ', b'}', b'{', b'[', b']', b'n', b'x', b'0', b'.', b'-', b'e',
                b'\\', 0x00, 0xC3,
            ] {
                let mut e = clean.to_vec();
                e[at] = with;
                check(&trace_of(&[clean, clean, &e, clean], 2));
            }
        }
    }
}

/// The events the direct walk took on `input` with the best kernel.
fn direct_events(input: &[u8]) -> u64 {
    let mut r = TraceReader::with_kernel(input, 1 << 20, ScanKernel::best());
    while let Ok(Some(_)) = r.next_event() {}
    r.direct_walk_events()
}

#[test]
fn bad_events_at_every_block_offset_agree_with_the_byte_parser() {
    let good = TRICKY_EVENTS[0].as_bytes();
    for bad in BAD_EVENTS {
        for pad in 0..=70 {
            let input = trace_of(&[good, bad.as_bytes(), good], pad);
            check(&input);
        }
    }
}

/// A small fixed-seed generator (xorshift64*): no dependency, and the same
/// inputs on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn blanks(rng: &mut Rng, out: &mut Vec<u8>) {
    if rng.below(3) == 0 {
        for _ in 0..rng.below(4) {
            out.push(*rng.pick(b" \n\t\r"));
        }
    }
}

fn string(rng: &mut Rng, out: &mut Vec<u8>) {
    out.push(b'"');
    let max = if rng.below(8) == 0 { 150 } else { 12 };
    let len = rng.below(max);
    for _ in 0..len {
        match rng.below(40) {
            0 => {
                const ESCAPES: [&[u8]; 5] = [b"\\\"", b"\\\\", b"\\n", b"\\u00e9", b"\\/"];
                out.extend_from_slice(ESCAPES[rng.below(ESCAPES.len())])
            }
            1 => out.extend_from_slice("\u{e9}\u{1F600}".as_bytes()),
            _ => out.push(*rng.pick(b"abcdefghijklmnopqrstuvwxyz_:,{}[] 0123456789()<>")),
        }
    }
    out.push(b'"');
}

fn number(rng: &mut Rng, out: &mut Vec<u8>) {
    let text = match rng.below(6) {
        0 => format!("{}", rng.below(10)),
        1 => format!(
            "-{}.{:06}",
            rng.next() % 1_000_000_000,
            rng.below(1_000_000)
        ),
        2 => format!("{}e{}", rng.below(100), rng.below(20)),
        _ => format!(
            "{}.{:06}",
            1_733_400_000_000_000u64 + rng.next() % 1_000_000_000,
            rng.below(1_000_000)
        ),
    };
    out.extend_from_slice(text.as_bytes());
}

fn value(rng: &mut Rng, out: &mut Vec<u8>, depth: usize) {
    match rng.below(if depth > 3 { 5 } else { 8 }) {
        0 | 1 => string(rng, out),
        2 | 3 => number(rng, out),
        4 => {
            const LITERALS: [&[u8]; 3] = [b"true", b"false", b"null"];
            out.extend_from_slice(LITERALS[rng.below(LITERALS.len())])
        }
        5 | 6 => {
            out.push(b'{');
            for k in 0..rng.below(4) {
                if k > 0 {
                    out.push(b',');
                }
                blanks(rng, out);
                string(rng, out);
                blanks(rng, out);
                out.push(b':');
                blanks(rng, out);
                value(rng, out, depth + 1);
                blanks(rng, out);
            }
            out.push(b'}');
        }
        _ => {
            out.push(b'[');
            for k in 0..rng.below(4) {
                if k > 0 {
                    out.push(b',');
                }
                blanks(rng, out);
                value(rng, out, depth + 1);
                blanks(rng, out);
            }
            out.push(b']');
        }
    }
}

fn event(rng: &mut Rng, out: &mut Vec<u8>) {
    const KEYS: [&str; 12] = [
        "ph", "name", "cat", "pid", "tid", "ts", "dur", "id", "args", "s", "bp", "other",
    ];
    out.push(b'{');
    for k in 0..rng.below(9) {
        if k > 0 {
            out.push(b',');
        }
        blanks(rng, out);
        out.push(b'"');
        out.extend_from_slice(rng.pick(&KEYS).as_bytes());
        out.push(b'"');
        blanks(rng, out);
        out.push(b':');
        out.push(b' ');
        value(rng, out, 2);
    }
    out.push(b'}');
}

fn random_trace(rng: &mut Rng) -> Vec<u8> {
    let mut t = if rng.below(4) == 0 {
        b"[".to_vec()
    } else {
        b"{\"traceEvents\":[\n".to_vec()
    };
    let object = t[0] == b'{';
    for k in 0..rng.below(12) {
        if k > 0 {
            t.extend_from_slice(b",\n");
        }
        event(rng, &mut t);
    }
    t.extend_from_slice(if object { b"\n]}\n" } else { b"]" });
    t
}

#[test]
fn random_traces_and_mutations_agree_with_the_byte_parser() {
    let mut rng = Rng(0x5eed_1234_abcd_0042);
    let mut fast = 0;
    for _ in 0..400 {
        let trace = random_trace(&mut rng);
        fast += check(&trace);
        for _ in 0..6 {
            let mut m = trace.clone();
            if m.is_empty() {
                break;
            }
            match rng.below(4) {
                0 => {
                    let at = rng.below(m.len());
                    m[at] = *rng.pick(b"\"\\{}[]:,0a \x01\xc3\xff-.e");
                }
                1 => {
                    let at = rng.below(m.len());
                    m.insert(at, *rng.pick(b"\"\\{}[]:,0a \x01\xc3-"));
                }
                2 => {
                    let at = rng.below(m.len());
                    m.remove(at);
                }
                _ => m.truncate(rng.below(m.len())),
            }
            check(&m);
        }
    }
    assert!(fast > 500, "fast path took only {fast} events");
}

/// The back-off of docs/benchmarks.md#the-json-trace-scanner: after
/// k fast-path misses in a row the next 2^k - 1 events go straight to the
/// byte parser, each event asked once (the `,` shortcut used to ask twice).
#[test]
fn back_off_skips_exactly_the_documented_events() {
    let clean: &[u8] = br#"{"name": "k", "ph": "X", "ts": 1.5, "dur": 2.0, "pid": 1, "tid": 2}"#;
    let escaped: &[u8] =
        br#"{"name": "a\"b", "ph": "X", "ts": 1.5, "dur": 2.0, "pid": 1, "tid": 2}"#;
    let fast_of = |events: &[&[u8]]| {
        let input = trace_of(events, 1);
        let mut r = TraceReader::with_kernel(&input[..], 1 << 20, ScanKernel::best());
        let mut n = 0;
        while r.next_event().expect("valid trace").is_some() {
            n += 1;
        }
        assert_eq!(n, events.len());
        r.fast_path_events()
    };
    // One miss (k = 1): the event after it is skipped, the rest are fast.
    let mut one_miss = vec![clean, clean, escaped];
    one_miss.extend(std::iter::repeat_n(clean, 10));
    assert_eq!(fast_of(&one_miss), 2 + 9);
    // Two misses in a row (k = 2): the escaped event after the first miss
    // is the skipped one, so it does not count as a second miss; then the
    // next event is fast again.
    let mut two = vec![escaped, escaped];
    two.extend(std::iter::repeat_n(clean, 10));
    assert_eq!(fast_of(&two), 10);
    // Three escaped events: miss (k=1, skip 1), skipped, miss (k=2, skip
    // 3): three clean events skipped, then fast.
    let mut three = vec![escaped, escaped, escaped];
    three.extend(std::iter::repeat_n(clean, 10));
    assert_eq!(fast_of(&three), 10 - 3);
}
