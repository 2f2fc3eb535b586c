//! Streaming reader of Chrome/Perfetto trace JSON (docs/formats.md#trace-json).
//!
//! [`TraceReader`] scans a trace once, front to back, through one reusable
//! buffer and yields every element of `traceEvents` as the raw bytes of the
//! source ([`Event::raw`]): events are validated but never re-encoded, so a
//! timestamp like `1719391234567890.250000` keeps its digits. While an event
//! is validated, the spans of its top-level keys `ph`, `name`, `cat`, `pid`,
//! `tid`, `ts`, `dur`, `id` and `args` are recorded, which gives filters and
//! statistics cheap field access without a second parse.
//!
//! Speed (docs/benchmarks.md#the-json-trace-scanner): with the x86 kernels
//! each event is first tried by the direct walk, which checks events in
//! unitrace's own shapes (`"key": value, ` members with short keys, strings,
//! numbers, one nested object) from the bytes, guessing each key and each
//! number's shape from the last event so that the CPU runs ahead on
//! predicted branches. What it is not sure of goes to a token walker over
//! stage-1 bit masks (`blocks`, 64 bytes at a time with AVX2/SSE2),
//! which visits quotes, brackets and the first byte of each number instead
//! of every byte, and reads the usual members (keys of up to 5 bytes)
//! straight from the bytes, dropping their tokens at once. Both accept only
//! what they can vouch for; every other event (escapes, control bytes,
//! syntax errors, deep nesting, the end of the bytes read so far) goes
//! through the byte parser (`byte_parser`), so errors, positions and
//! truncation are the byte parser's.
//! [`TraceReader::with_kernel`] picks the kernel ([`ScanKernel::Reference`]:
//! the byte parser alone) for benchmarks and the differential tests
//! (`core/tests/trace_scanner.rs`).
//!
//! Accepted shapes: the object form `{"traceEvents": [...], ...}` (other
//! top-level keys are validated and skipped) and Chrome's bare array form
//! `[...]`.
//!
//! Memory: the buffer only has to hold one event (plus the separator before
//! it), whatever the length of a line; [`TraceReader::with_max_event_bytes`]
//! bounds it (an event longer than that is an error, not an allocation).
//!
//! Truncation: a trace whose writer was killed stops in the middle of the
//! array (docs/formats.md#trace-json-envelope). The reader then ends normally and
//! [`TraceSummary::truncation`] says where the last complete event ended and
//! how many bytes after it were dropped. [`repaired_bytes`] and
//! [`repair_to`] turn such a trace into valid JSON (every complete event
//! kept) without touching the input.
//!
//! Files: `event.rs` (an event, its recorded fields and their accessors),
//! `value.rs` (integer and string value texts), `error.rs` ([`TraceError`]),
//! `blocks.rs` (stage 1: bit masks of 64-byte blocks), `byte_parser.rs`
//! (the byte parser, which decides every error; [`object_members`]), `keys.rs` (short keys
//! read as one word, and the slots of the walkers' guesses), `token_walk.rs`
//! (stage 2: the token walker), `direct_walk.rs` (the direct walk),
//! `reader.rs` ([`TraceReader`]: the buffer, top-level state
//! machine, truncation), `repair.rs` ([`repaired_bytes`], [`repair_to`]),
//! `decimal.rs` (exact decimal timestamps, [`decimal::Decimal`]),
//! `merged_input.rs` (the edits that put one input's events into a merged
//! trace: its own ids, its rank in its process names, its clock).

mod blocks;
mod byte_parser;
pub mod decimal;
mod direct_walk;
mod error;
mod event;
mod keys;
pub mod merged_input;
mod reader;
mod repair;
mod token_walk;
mod value;

#[cfg(test)]
mod tests;

pub use blocks::ScanKernel;
pub use byte_parser::object_members;
pub use error::{TraceError, TraceErrorKind};
pub use event::{Event, EventFields, Field, Span};
pub use reader::{
    line_of_offset, scan, TraceForm, TraceReader, TraceSummary, Truncation, DEFAULT_MAX_EVENT_BYTES,
};
pub use repair::{repair_to, repaired_bytes, RepairReport, Repaired};
pub use value::{decode_string_content, parse_u64};
