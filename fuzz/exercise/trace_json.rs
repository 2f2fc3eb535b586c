//! Trace JSON (docs/formats.md#trace-json, `unitrace_core::trace`): the streaming scanner
//! gives events or an error, never a panic, on any bytes, and agrees with
//! itself and with serde_json:
//! * every event it yields is a JSON object serde_json also accepts;
//! * reading the input in small pieces (any refill boundary) yields the
//!   same events as reading it whole;
//! * a repaired trace (`repaired_bytes`, what mergetrace writes for a cut
//!   input) is valid JSON with as many events as the scan found;
//! * the byte parser alone (`ScanKernel::Reference`) finds the same events
//!   (bytes, offsets, field spans) and the same error position as the
//!   stage-1/stage-2 fast path (docs/benchmarks.md#the-json-trace-scanner).
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/trace_json/*`).

use std::io::Read;

use unitrace_core::trace::decimal::Decimal;
use unitrace_core::trace::{
    object_members, repaired_bytes, Field, ScanKernel, TraceReader, DEFAULT_MAX_EVENT_BYTES,
};

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

/// Hands out the input in pieces of 1..=7 bytes, so refills happen
/// everywhere.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.step = self.step % 7 + 1;
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// serde_json's verdict on one JSON text, `None` where its limits (not the
/// JSON grammar) decide: nesting deeper than 128, lone surrogate escapes.
/// A leading UTF-8 BOM, which RFC 8259 lets readers ignore (and the trace
/// reader does), is skipped.
fn serde_accepts(text: &[u8]) -> Option<bool> {
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    // A raw value is checked for syntax only, numbers are not converted
    // (1e400 is valid JSON).
    match serde_json::from_slice::<Box<serde_json::value::RawValue>>(text) {
        Ok(_) => Some(true),
        Err(e) => {
            let m = e.to_string();
            if m.contains("recursion limit") || m.contains("surrogate") {
                None
            } else {
                Some(false)
            }
        }
    }
}

pub fn run(data: &[u8]) {
    let _ = Decimal::parse(data);

    let mut whole = TraceReader::new(data);
    let mut events: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut spans = Vec::new();
    let mut error_at = None;
    let whole_ok = loop {
        match whole.next_event() {
            Ok(Some(ev)) => {
                let raw = ev.raw();
                assert_eq!(raw.first(), Some(&b'{'));
                assert_eq!(raw.last(), Some(&b'}'));
                assert_eq!(&data[ev.offset() as usize..][..raw.len()], raw);
                if let Some(ok) = serde_accepts(raw) {
                    assert!(
                        ok,
                        "event serde_json rejects: {:?}",
                        String::from_utf8_lossy(raw)
                    );
                }
                for f in FIELDS {
                    let _ = (ev.value(f), ev.str(f), ev.decimal(f), ev.uint(f), ev.f64(f));
                }
                if let Some(args) = ev.value(Field::Args) {
                    if args.first() == Some(&b'{') {
                        for (_, span) in object_members(args) {
                            assert!(span.range().end <= args.len());
                        }
                    }
                }
                spans.push(FIELDS.map(|f| ev.fields().span(f)));
                events.push((ev.offset(), raw.to_vec()));
            }
            Ok(None) => break true,
            Err(e) => {
                let _ = e.problem();
                error_at = Some((e.problem(), e.line, e.offset));
                break false;
            }
        }
    };

    // The byte parser alone agrees with the fast path.
    let mut reference =
        TraceReader::with_kernel(data, DEFAULT_MAX_EVENT_BYTES, ScanKernel::Reference);
    let mut k = 0;
    loop {
        match reference.next_event() {
            Ok(Some(ev)) => {
                let (offset, raw) = &events[k];
                assert_eq!((ev.offset(), ev.raw()), (*offset, raw.as_slice()));
                assert_eq!(FIELDS.map(|f| ev.fields().span(f)), spans[k]);
                k += 1;
            }
            Ok(None) => {
                assert!(
                    whole_ok && k == events.len(),
                    "the byte parser alone disagrees"
                );
                break;
            }
            Err(e) => {
                assert_eq!(Some((e.problem(), e.line, e.offset)), error_at);
                assert_eq!(k, events.len());
                break;
            }
        }
    }

    // Same events when the input arrives in small pieces.
    let mut trickled = TraceReader::new(Trickle {
        data,
        step: data.len() % 7,
    });
    let mut i = 0;
    loop {
        match trickled.next_event() {
            Ok(Some(ev)) => {
                let (offset, raw) = &events[i];
                assert_eq!((ev.offset(), ev.raw()), (*offset, raw.as_slice()));
                i += 1;
            }
            Ok(None) => {
                assert!(
                    whole_ok,
                    "trickled read succeeded where the whole read failed"
                );
                assert_eq!(i, events.len());
                break;
            }
            Err(_) => {
                assert!(
                    !whole_ok,
                    "trickled read failed where the whole read succeeded"
                );
                break;
            }
        }
    }

    // A small event limit gives an error, not a crash.
    let mut small = TraceReader::with_max_event_bytes(data, 64);
    while let Ok(Some(_)) = small.next_event() {}

    if let Ok(repaired) = repaired_bytes(data) {
        if let Some(ok) = serde_accepts(&repaired.bytes) {
            assert!(
                ok,
                "repaired trace is not JSON: {:?}",
                String::from_utf8_lossy(&repaired.bytes)
            );
        }
        let mut again = TraceReader::new(&repaired.bytes[..]);
        let mut n = 0u64;
        while let Ok(Some(_)) = again.next_event() {
            n += 1;
        }
        assert_eq!(n, repaired.events);
        assert!(
            again.summary().truncation.is_none(),
            "repaired trace still truncated"
        );
    }
}
