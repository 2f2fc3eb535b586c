//! Helpers shared by the test modules that run the `analyze` binary.

use std::path::Path;
use std::process::{Command, Output};

/// Runs analyze with `args` in `cwd`.
pub fn analyze(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_analyze"))
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("analyze runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
