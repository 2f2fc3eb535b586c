//! Option files (`-f FILE`, docs/formats.md#option-file): shlex-style splitting, the
//! expansion of `-f` in a command line (reading the file), and the whole
//! analyze command line built from the words must give an error, never a
//! panic.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/option_file/*`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;

use analyze::args::Args;
use analyze::option_file::{expand_option_files, shell_split};
use clap::Parser;

/// One option file per fuzzing process, rewritten for every input.
fn option_file_path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("unitrace-fuzz-options-{}.txt", std::process::id()))
    })
}

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(words) = shell_split(&text) {
        let argv = std::iter::once("analyze".to_string()).chain(words);
        let _ = Args::try_parse_from(argv);
    }
    let path = option_file_path();
    if std::fs::write(path, data).is_err() {
        return;
    }
    let argv: Vec<OsString> = vec!["analyze".into(), "-f".into(), path.into(), "in.csv".into()];
    if let Ok(expanded) = expand_option_files(argv) {
        let _ = Args::try_parse_from(expanded);
    }
}
