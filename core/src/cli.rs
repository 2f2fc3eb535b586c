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

/// Collapses newlines so an error never spans several lines, and escapes
/// the other control characters (`\x1b`, `\r`, NUL, C1 controls): bytes of
/// an input quoted in a message must not drive the terminal
/// (docs/robustness.md#messages).
pub fn one_line(message: &str) -> String {
    let joined = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    escape_controls(&joined)
}

/// `\r`, `\n`, `\0` and `\xNN` (`\u{NN}` above 0x7f) for control
/// characters; a tab (harmless on a terminal) and everything else unchanged.
pub fn escape_controls(text: &str) -> String {
    if !text.chars().any(|c| c.is_control() && c != '\t') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\0' => out.push_str("\\0"),
            '\t' => out.push('\t'),
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// [`escape_controls`] for text of several lines: the newlines are kept,
/// every other control character of each line escaped. For reports a tool
/// prints whose lines quote inputs (kernel names, paths).
pub fn escape_lines(text: &str) -> std::borrow::Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\t' && c != '\n')
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let lines: Vec<String> = text.split('\n').map(escape_controls).collect();
    std::borrow::Cow::Owned(lines.join("\n"))
}

/// Prints one warning line `tool: warning: message` on stderr.
pub fn warn(tool: &str, message: impl Display) {
    eprintln!("{tool}: warning: {}", one_line(&message.to_string()));
}

/// The cores this process may run on (affinity and cgroup quota
/// respected), at least 1.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `--jobs N` of every tool (docs/robustness.md#options): at least 1; more
/// threads than [`cores`] only cost memory and switches, so a larger N is
/// clamped to the cores with one warning. Use as a clap value parser:
/// `#[arg(long, value_parser = unitrace_core::cli::jobs_parser("tracestat"))]`.
pub fn jobs_parser(
    tool: &'static str,
) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |text: &str| {
        let (jobs, warning) = parse_jobs(text, cores())?;
        if let Some(w) = warning {
            warn(tool, w);
        }
        Ok(jobs)
    }
}

/// [`jobs_parser`] for `cores` cores: the thread count and the warning.
pub fn parse_jobs(text: &str, cores: usize) -> Result<(usize, Option<String>), String> {
    let jobs = match text.trim().parse::<u64>() {
        Ok(0) => return Err("0 threads: give 1 or more".to_string()),
        Ok(n) => n,
        Err(_) => return Err(format!("`{text}` is not a number of threads (1 or more)")),
    };
    let cores = cores.max(1);
    if jobs > cores as u64 {
        let warning = format!(
            "--jobs {jobs} is more than the {cores} cores this process may use; {cores} threads are used"
        );
        return Ok((cores, Some(warning)));
    }
    Ok((jobs as usize, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_at_least_1_and_at_most_the_cores() {
        assert_eq!(parse_jobs("3", 8), Ok((3, None)));
        assert_eq!(
            parse_jobs("100000", 2),
            Ok((
                2,
                Some(
                    "--jobs 100000 is more than the 2 cores this process may use; 2 threads are used"
                        .to_string()
                )
            ))
        );
        assert_eq!(
            parse_jobs("0", 2),
            Err("0 threads: give 1 or more".to_string())
        );
        assert!(parse_jobs("-1", 2).is_err());
        assert!(parse_jobs("99999999999999999999999", 2).is_err());
    }

    #[test]
    fn control_bytes_of_inputs_are_escaped() {
        let message = "a.csv:3: unknown kernel \u{1b}[31mred\u{1b}[0m\rX\0Y\u{85}Z";
        assert_eq!(
            one_line(message),
            "a.csv:3: unknown kernel \\x1b[31mred\\x1b[0m\\rX\\0Y\\u{85}Z"
        );
        assert_eq!(one_line("two\nlines\r\n"), "two lines");
        assert_eq!(one_line("plain – ünïcode"), "plain – ünïcode");
        assert_eq!(escape_lines("a\u{1b}b\n\tc\r\n"), "a\\x1bb\n\tc\\r\n");
        assert_eq!(escape_lines("plain\n"), "plain\n");
    }
}
