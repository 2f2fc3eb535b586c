//! Errors of the trace scanner: what made a trace unreadable, and the line
//! and offset where that was found.

use std::fmt;
use std::io;
use std::path::Path;

use crate::error::InputError;

/// What kind of problem made a trace unreadable.
#[derive(Debug)]
pub enum TraceErrorKind {
    Io(io::Error),
    /// The first non-blank byte is neither `{` nor `[`.
    NotJson(String),
    /// Invalid JSON syntax.
    Syntax(String),
    /// An element of `traceEvents` is not an object.
    EventNotObject {
        index: u64,
    },
    InvalidUtf8,
    /// `traceEvents` holds something other than an array.
    TraceEventsNotArray,
    /// One event (or other top-level value) is longer than the limit.
    TooLong {
        limit: usize,
    },
}

/// A trace that cannot be read, with the 1-based line where that was found.
#[derive(Debug)]
pub struct TraceError {
    pub kind: TraceErrorKind,
    pub line: Option<u64>,
    pub offset: u64,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        f.write_str(&self.problem())
    }
}

impl std::error::Error for TraceError {}

impl TraceError {
    pub(super) fn io(err: io::Error) -> TraceError {
        TraceError {
            kind: TraceErrorKind::Io(err),
            line: None,
            offset: 0,
        }
    }

    /// The problem without the position.
    pub fn problem(&self) -> String {
        match &self.kind {
            TraceErrorKind::Io(e) => e.to_string(),
            TraceErrorKind::NotJson(what) => {
                format!("not a JSON trace: starts with {what}, expected '{{' or '['")
            }
            TraceErrorKind::Syntax(m) => format!("invalid JSON: {m}"),
            TraceErrorKind::EventNotObject { index } => {
                format!("traceEvents element {index} is not a JSON object")
            }
            TraceErrorKind::InvalidUtf8 => "invalid UTF-8 in a string".to_string(),
            TraceErrorKind::TraceEventsNotArray => "traceEvents is not an array".to_string(),
            TraceErrorKind::TooLong { limit } => format!(
                "an event (or top-level value) is longer than {limit} bytes; \
                 refusing to buffer it"
            ),
        }
    }

    /// `FILE[:LINE]: problem`, the error style of every tool.
    pub fn into_input_error(self, path: &Path) -> InputError {
        if let TraceErrorKind::Io(e) = &self.kind {
            return InputError::io(path, e);
        }
        match self.line {
            Some(line) => InputError::at_line(path, line, self.problem()),
            None => InputError::at_file(path, self.problem()),
        }
    }
}
