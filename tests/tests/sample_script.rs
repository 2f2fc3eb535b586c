//! `scripts/sample.sh` (README "Set-up"): on a fresh output folder it runs
//! every tool without a message on stderr other than the section titles
//! and the tools' warnings; in particular it never greps a server's log
//! before the log exists (`grep: .../server.log: No such file or directory`).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use unitrace_system_tests::{
    output_within, profile_dir, repo_root, tool_binary, without_package_env,
};

#[test]
fn the_sample_script_runs_clean_on_a_fresh_output_folder() {
    // Built first, so the script's own `cargo build` has nothing to do.
    tool_binary("analyze");
    let target = profile_dir().parent().unwrap().to_path_buf();
    let out = tempfile::tempdir().unwrap();
    let fresh = out.path().join("sample-out");
    let mut path: Vec<PathBuf> = std::env::var_os("CARGO")
        .map(PathBuf::from)
        .and_then(|c| c.parent().map(|p| p.to_path_buf()))
        .into_iter()
        .collect();
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let mut command = Command::new("bash");
    without_package_env(&mut command);
    command
        .arg(repo_root().join("scripts/sample.sh"))
        .env("CARGO_TARGET_DIR", &target)
        .env("SAMPLE_OUT", &fresh)
        .env("PATH", std::env::join_paths(path).unwrap());
    let run = output_within(&mut command, Duration::from_secs(600)).unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    let unexpected: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.starts_with("== ") && !l.contains(": warning: ") && !l.trim().is_empty())
        // The script's `cargo build`.
        .filter(|l| {
            !["Finished", "Compiling", "Blocking"]
                .iter()
                .any(|w| l.trim_start().starts_with(w))
        })
        .collect();
    assert!(unexpected.is_empty(), "{unexpected:#?}");
    assert!(fresh.join("server-instance-26.html").is_file());
}
