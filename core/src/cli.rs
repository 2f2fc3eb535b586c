//! The one error style of all tools: `TOOL: FILE[:LINE]: problem` on one line
//! of stderr and a non-zero exit code. CLIs call [`finish`] from `main`.

use std::fmt::Display;
use std::process::ExitCode;

/// Exit code for bad input or a failed run (usage errors exit 2 via clap).
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for command-line usage errors, as argparse and clap use.
pub const EXIT_USAGE: u8 = 2;

/// Prints `tool: message` for an error and turns the result into an exit code.
/// The error is formatted with `{:#}`, which for `anyhow::Error` prints the
/// whole context chain joined by `: `; newlines are folded so the message
/// stays on one line.
pub fn finish<E: Display>(tool: &str, result: Result<ExitCode, E>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{tool}: {}", one_line(&format!("{e:#}")));
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// Collapses newlines so an error never spans several lines.
pub fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints one warning line `tool: warning: message` on stderr.
pub fn warn(tool: &str, message: impl Display) {
    eprintln!("{tool}: warning: {}", one_line(&message.to_string()));
}
