//! Running the generator and the tools that read what it writes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn gen(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_unitrace-gen"))
        .args(args)
        .output()
        .expect("run unitrace-gen");
    assert!(
        out.status.success(),
        "unitrace-gen {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A tool of the workspace (built by the system-test helper when missing).
pub fn tool(name: &str) -> Command {
    Command::new(unitrace_system_tests::tool_binary(name))
}

/// Runs `cmd`, requires success and a stderr without any line other than
/// those `allowed` contains; returns stdout.
pub fn run_clean(cmd: &mut Command, allowed: &[&str]) -> String {
    let out = cmd.output().expect("run tool");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{cmd:?} failed: {stderr}");
    for line in stderr.lines() {
        assert!(
            allowed.iter().any(|a| line.contains(a)),
            "{cmd:?}: unexpected message: {line}"
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temporary path")
}

/// Files below `dir`, sorted, relative paths with their bytes.
pub fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), bytes));
            }
        }
    }
    out.sort();
    out
}

/// Files of `dir` with extension `ext`, sorted.
pub fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

/// `tracestat --json` of `inputs`: the report and stderr.
pub fn tracestat_json(dir: &Path, inputs: &[&str], name: &str) -> (serde_json::Value, String) {
    let report = dir.join(name);
    let out = tool("tracestat")
        .args(["-q", "--json", s(&report)])
        .args(inputs)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "tracestat failed: {stderr}");
    let v = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    (v, stderr)
}
