//! Harness of the cross-tool system tests: finds the tool binaries (building
//! them when needed), runs one tool invocation on scratch copies of its
//! inputs, and checks the contract every tool keeps on bad input
//! (README "Exit codes and errors"):
//!
//! * no panic (exit code 101, `panicked at` on stderr);
//! * on failure: exit code 1 (2 for usage errors such as a bad option
//!   file), exactly one stderr line `TOOL: FILE[:LINE]: problem` where FILE
//!   is one of the inputs (or a file inside an input folder), and no output
//!   file, not even a temporary one, in the output folder;
//! * on success: stderr holds only `TOOL: warning: ...` lines;
//! * no raw control byte (but newline and tab) on stdout or stderr;
//! * the input bytes are never changed.

pub mod expected;
pub mod layout;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The profile folder of the target dir this test executable was built in
/// (`target/release` for `target/release/deps/bad_inputs-…`): the tool
/// binaries of the same build live there. `CARGO_BIN_EXE_*` only exists in
/// the package that owns a binary, so it cannot be used here.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test executable");
    exe.parent()
        .and_then(Path::parent)
        .expect("test executable lives in target/<profile>/deps")
        .to_path_buf()
}

/// Path of the binary `name` of this build. The first call builds every
/// tool binary with the cargo that runs the tests (a no-op under `cargo
/// test --workspace`, which has built them already), so that `cargo test -p
/// unitrace-system-tests` also tests current binaries, never stale ones.
pub fn tool_binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let dir = profile_dir();
    if let Err(e) = BUILT.get_or_init(|| build_tools(&dir)) {
        panic!("cannot build the tool binaries: {e}");
    }
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "binary {} not found (build the workspace first)",
        path.display()
    );
    path
}

fn build_tools(profile_dir: &Path) -> Result<(), String> {
    // Without `CARGO` (test executable run by hand) the binaries must
    // already be there.
    let Some(cargo) = std::env::var_os("CARGO") else {
        return Ok(());
    };
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("unnamed profile folder")?;
    let target_dir = profile_dir.parent().ok_or("no target folder")?;
    let mut cmd = Command::new(cargo);
    cmd.arg("build").arg("--quiet").arg("--bins");
    match profile {
        "debug" => {}
        "release" => {
            cmd.arg("--release");
        }
        other => {
            cmd.args(["--profile", other]);
        }
    }
    // Every binary of the workspace, not only TOOL_PACKAGES: `-p` selects a
    // different feature unification (tracestat turns on serde_json's
    // float_roundtrip), so `-p` built other unitrace-core, render and tool
    // binaries than `cargo test --workspace` and put them in place of its
    // own: the system tests then ran binaries the other tests never saw,
    // after minutes of rebuilding. `--workspace --bins` resolves features
    // as `cargo test --workspace` does, so under it this is a no-op.
    cmd.arg("--workspace");
    // Cargo runs this test with the variables it sets for a package
    // (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, ...). Passed on, they reach the
    // build scripts of ring and friends, which declare them with
    // `rerun-if-env-changed`; cargo then sees them changed and rebuilds ring,
    // rustls and every tool here, and again in the next plain `cargo test`
    // (minutes per run on a busy machine, inside this test's time).
    without_package_env(&mut cmd);
    cmd.env("CARGO_TARGET_DIR", target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    let out = cmd.output().map_err(|e| format!("cannot run cargo: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Removes from `cmd`'s environment the variables cargo set for this test's
/// package, for a nested `cargo` (see `build_tools`).
pub fn without_package_env(cmd: &mut Command) {
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(is_set_by_cargo_for_a_package) {
            cmd.env_remove(&name);
        }
    }
}

/// Variables cargo sets when it builds or runs one package's code (cargo
/// book, "Environment variables Cargo sets for crates"), as opposed to the
/// ones a user sets to configure cargo (`CARGO_HOME`, `CARGO_PROFILE_*`, ...).
fn is_set_by_cargo_for_a_package(name: &str) -> bool {
    matches!(
        name,
        "CARGO_MANIFEST_DIR"
            | "CARGO_MANIFEST_PATH"
            | "CARGO_CRATE_NAME"
            | "CARGO_BIN_NAME"
            | "CARGO_PRIMARY_PACKAGE"
            | "CARGO_TARGET_TMPDIR"
            | "CARGO_RUSTC_CURRENT_DIR"
            | "OUT_DIR"
    ) || name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_BIN_EXE_")
}

/// The repository root (parent of this crate).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crate lives in the repository")
        .to_path_buf()
}

/// What a tool must do with one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Refuse it: exit code != 0, one error line; with `Some(n)`, the error
    /// must point at line `n` of the input.
    Fail(Option<u64>),
    /// Use it, with at least one warning line.
    Warn,
    /// Use it silently: the flaw does not concern this tool (e.g. `analyze
    /// -l` never reads metric values, so NaN values are not its business).
    /// The reason is part of the table, for the reader.
    Accept(&'static str),
    /// Either refuse it (following the error contract) or use it (warnings
    /// allowed): generated truncations at line boundaries can be valid
    /// files.
    Either,
    /// A command-line usage error (exit code 2) in clap's own format, which
    /// may span several lines (usage, hint): an option file naming an
    /// unknown option. No panic, no output, input unchanged still hold.
    Usage,
}

/// One run of one tool: program, arguments, the inputs it reads (whose
/// bytes must not change) and the folder where it writes its outputs
/// (which must stay empty when it fails).
#[derive(Debug)]
pub struct Invocation {
    /// Name printed before every message (`analyze`, `summary`, ...).
    pub tool: String,
    pub binary: PathBuf,
    pub args: Vec<OsString>,
    /// Inputs an error may name (the bad input under test).
    pub inputs: Vec<PathBuf>,
    /// Further inputs (valid files, folders) that must stay unchanged but
    /// that an error must not blame.
    pub other_inputs: Vec<PathBuf>,
    pub out_dir: PathBuf,
    /// Working folder (tools with a default output name write there).
    pub cwd: PathBuf,
    /// Why this tool's stdout may still carry raw control bytes of an
    /// input (`None`: it may not; stderr never may).
    pub raw_stdout: Option<&'static str>,
}

/// All files below `path` (or `path` itself) with their bytes.
pub fn snapshot(path: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            if let Ok(entries) = fs::read_dir(&p) {
                for e in entries.flatten() {
                    stack.push(e.path());
                }
            }
        } else if let Ok(bytes) = fs::read(&p) {
            files.insert(p, bytes);
        }
    }
    files
}

/// Runs `inv` and checks it against `expect`; `Err` describes every broken
/// rule (with the stderr), for a table-driven test to collect.
pub fn check(inv: &Invocation, expect: &Expect) -> Result<Output, String> {
    let all_inputs: Vec<&PathBuf> = inv.inputs.iter().chain(&inv.other_inputs).collect();
    let before: Vec<_> = all_inputs.iter().map(|p| snapshot(p)).collect();
    let out = run_with_timeout(inv)?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut problems = Vec::new();
    let code = out.status.code();

    if code == Some(101) || stderr.contains("panicked at") {
        problems.push("panicked".to_string());
    }
    if code.is_none() {
        problems.push(format!("killed by a signal ({:?})", out.status));
    }
    // Every line a tool prints escapes the control bytes an input may
    // carry (docs/robustness.md#messages): only newlines and tabs are raw.
    for (stream, bytes) in [("stderr", &out.stderr), ("stdout", &out.stdout)] {
        if stream == "stdout" && inv.raw_stdout.is_some() {
            continue;
        }
        if let Some(b) = bytes
            .iter()
            .find(|&&b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f)
        {
            problems.push(format!("raw control byte {b:#04x} on {stream}"));
        }
    }
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let warning_prefix = format!("{}: warning: ", inv.tool);
    // Informational lines (`summary: note: ...`) are allowed like warnings.
    let note_prefix = format!("{}: note: ", inv.tool);
    let is_remark = |l: &&str| l.starts_with(&warning_prefix) || l.starts_with(&note_prefix);
    let failed = !out.status.success();
    if failed && *expect == Expect::Usage {
        if code != Some(2) {
            problems.push(format!("exit code {code:?}, want 2 (usage error)"));
        }
        if lines.is_empty() {
            problems.push("usage error without a message".to_string());
        }
        let leftovers = snapshot(&inv.out_dir);
        if !leftovers.is_empty() {
            problems.push(format!(
                "failed run left files: {:?}",
                leftovers.keys().collect::<Vec<_>>()
            ));
        }
    } else if failed {
        if !matches!(code, Some(1) | Some(2)) {
            problems.push(format!(
                "exit code {code:?}, want 1 (or 2 for usage errors)"
            ));
        }
        // Warnings before the error are allowed (e.g. a skipped input);
        // the error itself is one line.
        let errors: Vec<&&str> = lines.iter().filter(|l| !is_remark(l)).collect();
        if errors.len() != 1 {
            problems.push(format!("{} error lines, want exactly 1", errors.len()));
        }
        if let Some(line) = errors.last() {
            if let Err(p) = check_error_line(line, inv) {
                problems.push(p);
            }
            if let Expect::Fail(Some(n)) = expect {
                if error_line_number(line, inv) != Some(*n) {
                    problems.push(format!("error does not point at line {n}"));
                }
            }
        }
        let leftovers = snapshot(&inv.out_dir);
        if !leftovers.is_empty() {
            problems.push(format!(
                "failed run left files: {:?}",
                leftovers.keys().collect::<Vec<_>>()
            ));
        }
        if matches!(expect, Expect::Warn | Expect::Accept(_)) {
            problems.push("refused an input it must accept".to_string());
        }
    } else {
        let non_warnings: Vec<&&str> = lines.iter().filter(|l| !is_remark(l)).collect();
        if !non_warnings.is_empty() {
            problems.push(format!(
                "succeeded with non-warning stderr {non_warnings:?}"
            ));
        }
        match expect {
            Expect::Fail(_) | Expect::Usage => {
                problems.push("accepted a bad input (exit code 0)".to_string())
            }
            Expect::Warn if !lines.iter().any(|l| l.starts_with(&warning_prefix)) => {
                problems.push("accepted a flawed input without a warning".to_string())
            }
            _ => {}
        }
    }
    for (path, snap) in all_inputs.iter().zip(&before) {
        if &snapshot(path) != snap {
            problems.push(format!("input {} changed", path.display()));
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(format!(
            "{} {:?}: {}\n    exit {:?}, stderr: {}",
            inv.tool,
            inv.args,
            problems.join("; "),
            code,
            shorten(&stderr)
        ))
    }
}

/// A tool that neither finishes nor fails within this time is a bug (a
/// server waiting for a client on a bad input, a loop).
const TIMEOUT: Duration = Duration::from_secs(60);

/// Runs the invocation with stdin closed; kills it after [`TIMEOUT`].
fn run_with_timeout(inv: &Invocation) -> Result<Output, String> {
    let mut command = Command::new(&inv.binary);
    command
        .args(&inv.args)
        .current_dir(&inv.cwd)
        .env_remove("RUST_BACKTRACE")
        .env("NO_COLOR", "1");
    output_within(&mut command, TIMEOUT).map_err(|e| format!("{} {:?}: {e}", inv.tool, inv.args))
}

/// Runs `command` with stdin closed and both outputs captured; kills it
/// and says so when it is still running after `limit` (a hang is a test
/// failure, never a hung suite).
pub fn output_within(command: &mut Command, limit: Duration) -> Result<Output, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", command.get_program()))?;
    // Drain both pipes while waiting, so a chatty tool never blocks.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("still running after {} s, killed", limit.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("cannot wait: {e}")),
        }
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

fn shorten(s: &str) -> String {
    const MAX: usize = 600;
    if s.len() <= MAX {
        return s.trim_end().to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The part of an error line after `TOOL: INPUT`: `Some(rest)` when the line
/// names one of the inputs (or a file inside an input folder).
fn after_input<'a>(line: &'a str, inv: &Invocation) -> Option<&'a str> {
    let rest = line.strip_prefix(&format!("{}: ", inv.tool))?;
    inv.inputs.iter().find_map(|input| {
        let shown = input.display().to_string();
        let after = rest.strip_prefix(shown.as_str())?;
        if input.is_dir() {
            // `DIR/file.asm:12: ...`: skip the file inside the folder.
            if let Some(inner) = after.strip_prefix('/') {
                let end = inner.find(':')?;
                return Some(&inner[end..]);
            }
        }
        Some(after)
    })
}

/// Checks `TOOL: FILE[:LINE]: problem` with a non-empty problem.
fn check_error_line(line: &str, inv: &Invocation) -> Result<(), String> {
    let bad = || {
        format!(
            "error line is not `{}: FILE[:LINE]: problem` naming an input",
            inv.tool
        )
    };
    let after = after_input(line, inv).ok_or_else(bad)?;
    let after = match after.strip_prefix(':') {
        Some(a) if a.starts_with(|c: char| c.is_ascii_digit()) => {
            let digits = a.find(|c: char| !c.is_ascii_digit()).unwrap_or(a.len());
            &a[digits..]
        }
        _ => after,
    };
    let problem = after.strip_prefix(": ").ok_or_else(bad)?;
    if problem.trim().is_empty() {
        return Err("error line has an empty problem".to_string());
    }
    Ok(())
}

fn error_line_number(line: &str, inv: &Invocation) -> Option<u64> {
    let after = after_input(line, inv)?.strip_prefix(':')?;
    let digits = after.find(|c: char| !c.is_ascii_digit())?;
    after[..digits].parse().ok()
}

/// The DOM headless Chromium builds for `url` (`--dump-dom`), with
/// `extra` switches (e.g. `--window-size=1400,3000`): the page tests of
/// every tool that writes HTML (tests/README.md#services).
pub fn chromium_dom(url: &str, extra: &[&str]) -> String {
    chromium_load(url, extra, false).dom
}

/// A page as headless Chromium loaded it ([`chromium_load`]).
pub struct ChromiumLoad {
    /// The DOM after the page's scripts ran (`--dump-dom`).
    pub dom: String,
    /// The console messages and uncaught errors Chromium logged (only when
    /// asked for: `--enable-logging=stderr`).
    pub console: Vec<String>,
}

/// Loads `url` in headless Chromium with `extra` switches, in a fresh
/// profile; with `console`, also collects what the page logged.
pub fn chromium_load(url: &str, extra: &[&str], console: bool) -> ChromiumLoad {
    let program = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".to_string());
    let profile = tempfile::tempdir().unwrap();
    let logging: &[&str] = if console {
        &["--enable-logging=stderr", "--v=0"]
    } else {
        &[]
    };
    let child = Command::new(&program)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ])
        .args(logging)
        .args(extra)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--dump-dom", url])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(if console {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => panic!(
            "this test needs headless Chromium: cannot run `{program}` ({e}). \
             Install it with `apt-get install -y chromium` (scripts/test.sh does), \
             or point the CHROMIUM variable at a Chromium binary"
        ),
    };
    // Read the DOM (and the log) while Chromium writes them: a page larger
    // than the pipe buffer would otherwise block it until the time-out.
    let read_all = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = child
        .stdout
        .take()
        .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>);
    let stderr = child
        .stderr
        .take()
        .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>);
    let (dom, log) = (read_all(stdout), read_all(stderr));
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("Chromium did not finish loading {url} within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "Chromium failed on {url}");
    let console = (log.join().unwrap().lines())
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect();
    ChromiumLoad {
        dom: dom.join().unwrap(),
        console,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv(input: &str) -> Invocation {
        Invocation {
            tool: "analyze".into(),
            binary: PathBuf::new(),
            args: Vec::new(),
            inputs: vec![PathBuf::from(input)],
            other_inputs: Vec::new(),
            out_dir: PathBuf::new(),
            cwd: PathBuf::new(),
            raw_stdout: None,
        }
    }

    #[test]
    fn error_line_form() {
        let i = inv("/t/in.csv");
        assert!(check_error_line("analyze: /t/in.csv:12: row has 3 fields", &i).is_ok());
        assert!(check_error_line("analyze: /t/in.csv: file is empty", &i).is_ok());
        assert_eq!(error_line_number("analyze: /t/in.csv:12: x", &i), Some(12));
        assert_eq!(error_line_number("analyze: /t/in.csv: x", &i), None);
        assert!(check_error_line("analyze: /t/other.csv: file is empty", &i).is_err());
        assert!(check_error_line("summary: /t/in.csv: file is empty", &i).is_err());
        assert!(check_error_line("analyze: /t/in.csv:", &i).is_err());
        assert!(check_error_line("analyze: /t/in.csv: ", &i).is_err());
    }
}
