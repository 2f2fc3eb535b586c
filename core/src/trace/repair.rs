//! A trace cut mid-write made valid (docs/formats.md#trace-json-envelope):
//! every complete event kept, the closing brackets of its form added, the
//! input left untouched.

use std::borrow::Cow;
use std::io::{Read, Write};

use super::error::{TraceError, TraceErrorKind};
use super::reader::{TraceForm, TraceReader, TraceSummary, Truncation};

/// A trace made valid: every complete event kept, closing brackets added.
#[derive(Debug)]
pub struct Repaired<'a> {
    /// The input itself when it was complete, else its repaired copy.
    pub bytes: Cow<'a, [u8]>,
    pub events: u64,
    /// `None` when the input was complete.
    pub truncation: Option<Truncation>,
    pub form: TraceForm,
}

/// What [`repair_to`] did.
#[derive(Debug, Clone)]
pub struct RepairReport {
    pub events: u64,
    pub truncation: Option<Truncation>,
    pub form: TraceForm,
    pub bytes_written: u64,
}

/// The minimal trace written when even the header of an input was cut.
const EMPTY_OBJECT_TRACE: &[u8] = b"{\"traceEvents\": [\n]\n}\n";

/// Validates `input` and, if it was cut mid-write, returns a repaired copy:
/// the input up to the end of its last complete event followed by the
/// closing brackets of its form. A complete input is returned borrowed. An
/// empty input gives an empty object trace. Errors for inputs that are not
/// a trace at all (not JSON, invalid UTF-8, an event that is not an object,
/// an object without `traceEvents`).
pub fn repaired_bytes(input: &[u8]) -> Result<Repaired<'_>, TraceError> {
    let mut reader = TraceReader::new(input);
    while reader.next_event()?.is_some() {}
    let s = reader.summary().clone();
    check_has_events_array(&s)?;
    let form = s.form.unwrap_or(TraceForm::Object);
    let bytes = match &s.truncation {
        None if s.empty => Cow::Borrowed(EMPTY_OBJECT_TRACE),
        None if s.trailing_data.is_some() => {
            // Drop what follows the top-level value (not JSON).
            let mut out = input[..s.value_end as usize].to_vec();
            out.push(b'\n');
            Cow::Owned(out)
        }
        None => Cow::Borrowed(input),
        Some(t) if !t.array_opened => Cow::Borrowed(match form {
            TraceForm::Object => EMPTY_OBJECT_TRACE,
            TraceForm::Array => b"[\n]\n" as &[u8],
        }),
        Some(t) => {
            let mut out = Vec::with_capacity(t.kept_bytes as usize + 8);
            out.extend_from_slice(&input[..t.kept_bytes as usize]);
            out.extend_from_slice(form.closing());
            Cow::Owned(out)
        }
    };
    Ok(Repaired {
        bytes,
        events: s.events,
        truncation: s.truncation,
        form,
    })
}

fn check_has_events_array(s: &TraceSummary) -> Result<(), TraceError> {
    if !s.empty && !s.has_trace_events && s.truncation.is_none() {
        return Err(TraceError {
            kind: TraceErrorKind::Syntax("no traceEvents array".into()),
            line: None,
            offset: 0,
        });
    }
    Ok(())
}

/// Streaming form of [`repaired_bytes`]: copies `input` to `out`, ending
/// after the last complete event plus the closing brackets when the input
/// was cut. Memory stays bounded by the largest event. On error, `out` has
/// received a prefix only: write to a temporary file (crate::atomic).
pub fn repair_to<R: Read, W: Write>(input: R, mut out: W) -> Result<RepairReport, TraceError> {
    let mut reader = TraceReader::new(input);
    let mut written: u64 = 0;
    // Bytes from the last write up to the end of each event are still in the
    // buffer: the reader keeps everything after the previous event.
    while let Some(ev) = reader.next_event()? {
        let end = ev.offset() + ev.raw().len() as u64;
        let from = (written - reader.base) as usize;
        let to = (end - reader.base) as usize;
        out.write_all(&reader.buf[from..to])
            .map_err(TraceError::io)?;
        written = end;
    }
    let s = reader.summary().clone();
    check_has_events_array(&s)?;
    let form = s.form.unwrap_or(TraceForm::Object);
    let tail: Cow<[u8]> = match &s.truncation {
        None if s.empty => Cow::Borrowed(EMPTY_OBJECT_TRACE),
        None => {
            let from = (written - reader.base) as usize;
            if s.trailing_data.is_some() {
                let mut tail = reader.buf[from..(s.value_end - reader.base) as usize].to_vec();
                tail.push(b'\n');
                Cow::Owned(tail)
            } else {
                Cow::Owned(reader.buf[from..reader.len].to_vec())
            }
        }
        Some(t) if !t.array_opened => Cow::Borrowed(match form {
            TraceForm::Object => EMPTY_OBJECT_TRACE,
            TraceForm::Array => b"[\n]\n" as &[u8],
        }),
        Some(t) => {
            let mut tail = Vec::new();
            if s.events == 0 {
                // Header up to and including '[' is still buffered.
                let from = (written - reader.base) as usize;
                let to = (t.kept_bytes - reader.base) as usize;
                tail.extend_from_slice(&reader.buf[from..to]);
            }
            tail.extend_from_slice(form.closing());
            Cow::Owned(tail)
        }
    };
    out.write_all(&tail).map_err(TraceError::io)?;
    written += tail.len() as u64;
    Ok(RepairReport {
        events: s.events,
        truncation: s.truncation,
        form,
        bytes_written: written,
    })
}
