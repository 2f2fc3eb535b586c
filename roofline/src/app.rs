//! `--app "CMD"`: profile the application twice with unitrace, once per
//! metric group (docs/compatibility.md#roofline-app), then read the metric files it wrote.
//!
//! Differences from the original (6.5 item 8): the command string is split
//! with shell quoting rules and run without a shell; a unitrace run that
//! fails is an error; the output prefix is a relative path without dots
//! (unitrace derives file names from the first and last dot of the whole
//! `-o` path, so a dot in the working directory's path broke the original).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};
use unitrace_core::shell_words::{self, SplitError};
use unitrace_core::walk::{walk, Depth};

/// The two runs: metric group and output prefix (docs/compatibility.md#roofline-app).
pub const RUNS: [(&str, &str); 2] = [
    ("ComputeBasic", "_IntelGPUBasic"),
    ("VectorEngine138", "_IntelGPUCompute"),
];

/// Splits a command string like a POSIX shell splits words (blanks, quotes,
/// backslashes, line continuations; no variable, glob or tilde expansion).
pub fn split_command(cmd: &str) -> Result<Vec<String>> {
    let words = shell_words::split(cmd, shell_words::Dialect::Posix).map_err(|e| match e {
        SplitError::UnclosedQuote('\'') => {
            anyhow!("unterminated single quote in --app command `{cmd}`")
        }
        SplitError::UnclosedQuote(_) => {
            anyhow!("unterminated double quote in --app command `{cmd}`")
        }
        SplitError::TrailingBackslash => {
            anyhow!("--app command `{cmd}` ends with a lone backslash")
        }
    })?;
    if words.is_empty() {
        bail!("--app command is empty");
    }
    Ok(words)
}

/// `--unitrace PATH` must be an executable file; without it, search PATH.
pub fn find_unitrace(given: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = given {
        if is_executable(p) {
            return Ok(p.to_path_buf());
        }
        bail!(
            "The specified unitrace path '{}' is not valid or not executable.",
            p.display()
        );
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join("unitrace");
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    bail!("The unitrace executable is not found in the PATH and no path was provided.")
}

fn is_executable(p: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(p) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// Metric files of one run, as unitrace names them: legacy
/// `<prefix>.metrics.<pid>[.<rank>]` (one per process), else the V0 main
/// log `<prefix>.<pid>` that carried the metrics itself.
pub fn metric_files(dir: &Path, prefix: &str) -> Result<Vec<PathBuf>> {
    let name_rest = |p: &Path| -> Option<String> {
        let name = p.file_name()?.to_string_lossy().into_owned();
        Some(name.strip_prefix(prefix)?.strip_prefix('.')?.to_string())
    };
    // The folder's walk skips FIFOs and unreadable files with a warning
    // (docs/robustness.md#walked-folders).
    let found = walk(dir, Depth::Flat, &|p| name_rest(p).is_some())
        .with_context(|| format!("{}", dir.display()))?;
    for skipped in &found.skipped {
        unitrace_core::cli::warn("roofline", skipped);
    }
    let mut metrics = Vec::new();
    let mut logs = Vec::new();
    for path in found.files {
        let Some(rest) = name_rest(&path) else {
            continue;
        };
        if rest.starts_with("metrics") {
            metrics.push(path);
        } else if !rest.ends_with(".json") {
            logs.push(path);
        }
    }
    let mut files = if metrics.is_empty() { logs } else { metrics };
    files.sort();
    Ok(files)
}

/// Runs unitrace for both groups inside `dir` (a relative path without
/// dots) and returns (memory files, compute files).
pub fn profile(
    unitrace: &Path,
    app: &[String],
    dir: &Path,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let mut found = Vec::new();
    for (group, prefix) in RUNS {
        let out = dir.join(prefix);
        let mut args: Vec<OsString> = [
            "--group",
            group,
            "--demangle",
            "-q",
            "--chrome-kernel-logging",
            "-o",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        args.push(out.clone().into_os_string());
        args.extend(app.iter().map(OsString::from));
        let shown: Vec<String> = std::iter::once(unitrace.as_os_str())
            .chain(args.iter().map(OsString::as_os_str))
            .map(|a| py_str_repr(&a.to_string_lossy()))
            .collect();
        println!("The command is [{}]", shown.join(", "));
        let status = Command::new(unitrace)
            .args(&args)
            .status()
            .with_context(|| format!("cannot run {}", unitrace.display()))?;
        if !status.success() {
            bail!("unitrace run with --group {group} failed ({status}); no roofline written");
        }
        let files = metric_files(dir, prefix)?;
        if files.is_empty() {
            bail!(
                "unitrace run with --group {group} wrote no metric file {}.metrics.* in {}",
                prefix,
                dir.display()
            );
        }
        found.push(files);
    }
    let compute = found.pop().unwrap_or_default();
    let memory = found.pop().unwrap_or_default();
    Ok((memory, compute))
}

/// Python's `repr(str)` for the `The command is [...]` line.
fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split_command("./a.out -n 5").unwrap(),
            ["./a.out", "-n", "5"]
        );
        assert_eq!(
            split_command(r#"app "two words" 'it''s' a\ b "q\"x" ''"#).unwrap(),
            ["app", "two words", "its", "a b", "q\"x", ""]
        );
        assert_eq!(
            split_command("app '$HOME' *.c").unwrap(),
            ["app", "$HOME", "*.c"]
        );
        assert!(split_command("app 'oops").is_err());
        assert!(split_command("   ").is_err());
    }

    #[test]
    fn python_list_repr_of_arguments() {
        assert_eq!(py_str_repr("a b"), "'a b'");
        assert_eq!(py_str_repr("it's"), "\"it's\"");
    }
}
