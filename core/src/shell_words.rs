//! Splitting a string into words with shell quoting rules, shared by
//! analyze's option files (docs/formats.md#option-file) and roofline's `--app "CMD"`.
//!
//! Both follow the same rules: whitespace separates words; single quotes keep
//! everything literally; double quotes keep everything but the backslash
//! escapes of `\ " $` and backquote (any other backslash stays); a backslash
//! outside quotes escapes the next character; nothing is expanded and `#` is
//! not special. They differ in two details, chosen by [`Dialect`], because
//! they imitate different originals: an option file is read by Python's
//! `shlex.split`, an `--app` command was run by `/bin/sh`.

use std::fmt;

/// Which original splitter to follow where they disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Python's `shlex.split` (option files, docs/formats.md#option-file): any Unicode
    /// whitespace (incl. `\r` of CRLF files) separates words, and an escaped
    /// newline is kept as a newline character.
    Shlex,
    /// A POSIX shell command line (`--app`, docs/compatibility.md#roofline-8): only
    /// space, tab and newline separate words, and backslash-newline is a line
    /// continuation that vanishes (outside and inside double quotes).
    Posix,
}

/// Why a string could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitError {
    /// A quote (`'` or `"`) that is never closed.
    UnclosedQuote(char),
    /// The text ends with a backslash that has nothing to escape.
    TrailingBackslash,
}

impl fmt::Display for SplitError {
    /// `shlex`'s wording, which the option-file errors keep.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::UnclosedQuote(_) => f.write_str("no closing quotation"),
            SplitError::TrailingBackslash => f.write_str("no escaped character"),
        }
    }
}

impl std::error::Error for SplitError {}

/// Splits `text` into words (see the module documentation for the rules).
pub fn split(text: &str, dialect: Dialect) -> Result<Vec<String>, SplitError> {
    let is_separator = |c: char| match dialect {
        Dialect::Shlex => c.is_whitespace(),
        Dialect::Posix => matches!(c, ' ' | '\t' | '\n'),
    };
    // What an escaped newline becomes.
    let push_escaped_newline = |word: &mut String| {
        if dialect == Dialect::Shlex {
            word.push('\n');
        }
    };
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            c if is_separator(c) => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(SplitError::UnclosedQuote('\'')),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(n @ ('\\' | '"' | '$' | '`')) => word.push(n),
                            Some('\n') => push_escaped_newline(&mut word),
                            Some(n) => {
                                word.push('\\');
                                word.push(n);
                            }
                            None => return Err(SplitError::UnclosedQuote('"')),
                        },
                        Some(c) => word.push(c),
                        None => return Err(SplitError::UnclosedQuote('"')),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => push_escaped_newline(&mut word),
                    Some(n) => word.push(n),
                    None => return Err(SplitError::TrailingBackslash),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::{split, Dialect, SplitError};

    const BOTH: [Dialect; 2] = [Dialect::Shlex, Dialect::Posix];

    #[test]
    fn common_rules() {
        for d in BOTH {
            assert_eq!(
                split("-m \"A[%],B[%]\" -y 'Y label'\n-b x\\ y #z", d).unwrap(),
                ["-m", "A[%],B[%]", "-y", "Y label", "-b", "x y", "#z"]
            );
            assert_eq!(split("a\"b\\\"c\"d", d).unwrap(), ["ab\"cd"]);
            assert_eq!(split("  \n ", d).unwrap(), Vec::<String>::new());
            assert_eq!(split("./a.out -n 5", d).unwrap(), ["./a.out", "-n", "5"]);
            assert_eq!(
                split(r#"app "two words" 'it''s' a\ b "q\"x" ''"#, d).unwrap(),
                ["app", "two words", "its", "a b", "q\"x", ""]
            );
            assert_eq!(
                split("app '$HOME' *.c", d).unwrap(),
                ["app", "$HOME", "*.c"]
            );
            assert_eq!(split(r#""\$\`\\\x" '\n'"#, d).unwrap(), ["$`\\\\x", "\\n"]);
        }
    }

    #[test]
    fn errors() {
        for d in BOTH {
            assert_eq!(split("-m \"open", d), Err(SplitError::UnclosedQuote('"')));
            assert_eq!(split("app 'oops", d), Err(SplitError::UnclosedQuote('\'')));
            assert_eq!(split("a \"b\\", d), Err(SplitError::UnclosedQuote('"')));
            assert_eq!(split("a\\", d), Err(SplitError::TrailingBackslash));
        }
        assert_eq!(
            SplitError::UnclosedQuote('"').to_string(),
            "no closing quotation"
        );
        assert_eq!(
            SplitError::TrailingBackslash.to_string(),
            "no escaped character"
        );
    }

    #[test]
    fn dialects_differ_on_escaped_newline_and_carriage_return() {
        assert_eq!(
            split("a\\\nb \"c\\\nd\"", Dialect::Shlex).unwrap(),
            ["a\nb", "c\nd"]
        );
        assert_eq!(
            split("a\\\nb \"c\\\nd\"", Dialect::Posix).unwrap(),
            ["ab", "cd"]
        );
        assert_eq!(
            split("-m x\r\n-y z\r\n", Dialect::Shlex).unwrap(),
            ["-m", "x", "-y", "z"]
        );
        assert_eq!(split("a\rb", Dialect::Posix).unwrap(), ["a\rb"]);
    }
}
