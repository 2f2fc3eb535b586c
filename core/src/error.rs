//! Error types with a position, shared by every parser.
//!
//! Every tool reports bad input as one line `TOOL: FILE:LINE: problem`; the
//! `TOOL: ` prefix is added at the CLI edge (see [`crate::cli`]), the rest is
//! the `Display` of [`InputError`].

use std::fmt;
use std::path::{Path, PathBuf};

/// Where in an input a problem was found. `line` is 1-based; `None` when the
/// problem concerns the file as a whole (missing, empty, not readable).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    pub path: PathBuf,
    pub line: Option<u64>,
}

impl Position {
    pub fn file(path: impl Into<PathBuf>) -> Self {
        Position {
            path: path.into(),
            line: None,
        }
    }

    pub fn line(path: impl Into<PathBuf>, line: u64) -> Self {
        Position {
            path: path.into(),
            line: Some(line),
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}", self.path.display(), line),
            None => write!(f, "{}", self.path.display()),
        }
    }
}

/// A problem with an input file, displayed as `FILE[:LINE]: problem`.
#[derive(Debug, thiserror::Error)]
#[error("{position}: {problem}")]
pub struct InputError {
    pub position: Position,
    pub problem: String,
}

impl InputError {
    pub fn new(position: Position, problem: impl Into<String>) -> Self {
        InputError {
            position,
            problem: problem.into(),
        }
    }

    pub fn at_file(path: &Path, problem: impl Into<String>) -> Self {
        InputError::new(Position::file(path), problem)
    }

    pub fn at_line(path: &Path, line: u64, problem: impl Into<String>) -> Self {
        InputError::new(Position::line(path, line), problem)
    }

    /// Wraps an I/O error that happened while reading `path`.
    pub fn io(path: &Path, err: &std::io::Error) -> Self {
        let problem = match err.kind() {
            std::io::ErrorKind::NotFound => "no such file".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ => err.to_string(),
        };
        InputError::at_file(path, problem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_file_and_line() {
        let e = InputError::at_line(Path::new("a.csv"), 12, "row has 3 fields, header has 5");
        assert_eq!(e.to_string(), "a.csv:12: row has 3 fields, header has 5");
        let e = InputError::at_file(Path::new("b.csv"), "file is empty");
        assert_eq!(e.to_string(), "b.csv: file is empty");
    }
}
