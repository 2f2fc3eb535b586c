//! `summary` integration tests: parity with summary.py's outputs
//! (testdata/summary/README.md), the quirk fixes, the per-rank table and
//! coverage report, bad input and warnings. One test binary for the crate.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod bad_input;
mod limits;
mod parity;
mod per_rank;
mod real_logs;
mod warnings;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub fn data(name: &str) -> PathBuf {
    repo().join("testdata/summary").join(name)
}

pub fn llama() -> PathBuf {
    repo().join("schemas/LLaMA.json")
}

pub fn summary(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_summary"))
        .args(args)
        .output()
        .expect("runs summary")
}

/// stdout of a successful run on `tgz` with the LLaMA schema.
pub fn run_ok(tgz: &Path, extra: &[&str]) -> (String, String) {
    let mut args = vec![
        "--input",
        tgz.to_str().unwrap(),
        "--schema",
        llama().to_str().unwrap().to_owned().leak(),
    ];
    args.extend_from_slice(extra);
    let o = summary(&args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "summary failed: {stderr}");
    (String::from_utf8(o.stdout).unwrap(), stderr)
}

/// An expected file of testdata/summary; `NAME.orig.*` files are the
/// original's outputs (tests/README.md, "Expected files").
pub fn golden(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

/// A `NAME.fixed.*` expected file for the output `actual`: rewritten from
/// it under `BLESS=1`.
pub fn expected(name: &str, actual: &str) -> String {
    unitrace_system_tests::expected::text(&data(name), actual)
}

pub const AGGREGATORS: [&str; 7] = ["min", "max", "mean", "median", "sum", "min+1", "max-1"];

/// Writes a gzip tarball holding `members` (name, bytes) to `path`.
pub fn tgz_of(path: &Path, members: &[(&str, &[u8])]) {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, bytes) in members {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        builder.append_data(&mut h, name, *bytes).unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).unwrap();
    std::fs::write(path, gz.finish().unwrap()).unwrap();
}

/// With `autotests = false` a `tests/*.rs` file not declared above would
/// never be built: fail instead (tests/README.md, "Layout").
#[test]
fn every_test_file_is_a_module_of_main() {
    unitrace_system_tests::layout::assert_every_test_file_is_a_module(env!("CARGO_MANIFEST_DIR"));
}
