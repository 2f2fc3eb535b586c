//! Replays the inputs that once crashed a fuzz target
//! (`fuzz/regressions/<target>/*`, minimized with `cargo fuzz tmin`) and the
//! shared bad-input corpus (`tests/bad_inputs/`) through the same checks the
//! fuzz targets run (`fuzz/exercise/<target>.rs`), so every fixed crash stays
//! fixed without a nightly toolchain. A file that panics is named in the
//! failure. The option-file target lives in the analyze crate and is
//! replayed by `tests/tests/fuzz_regressions.rs`.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

#[path = "../../fuzz/exercise/category_schema.rs"]
mod category_schema;
#[path = "../../fuzz/exercise/device_config.rs"]
mod device_config;
#[path = "../../fuzz/exercise/gzip_trace.rs"]
mod gzip_trace;
#[path = "../../fuzz/exercise/ini_schema.rs"]
mod ini_schema;
#[path = "../../fuzz/exercise/kineto_json.rs"]
mod kineto_json;
#[path = "../../fuzz/exercise/metric_csv.rs"]
mod metric_csv;
#[path = "../../fuzz/exercise/pftrace.rs"]
mod pftrace;
#[path = "../../fuzz/exercise/roofline_profile.rs"]
mod roofline_profile;
#[path = "../../fuzz/exercise/shader_dump.rs"]
mod shader_dump;
#[path = "../../fuzz/exercise/stall_csv.rs"]
mod stall_csv;
#[path = "../../fuzz/exercise/summary_tarball.rs"]
mod summary_tarball;
#[path = "../../fuzz/exercise/summary_text.rs"]
mod summary_text;
#[path = "../../fuzz/exercise/trace_json.rs"]
mod trace_json;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("core lives in the repository")
        .to_path_buf()
}

/// Files of the given folders (missing folders hold nothing yet).
fn files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(entries) = fs::read_dir(dir) else {
            continue;
        };
        for e in entries.flatten() {
            if e.path().is_file() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Runs `check` on every file of the target's regressions and of the
/// corpus folders; returns how many files ran.
fn replay(target: &str, corpus: &[&str], check: fn(&[u8])) -> usize {
    let root = repo();
    let mut dirs = vec![root.join("fuzz/regressions").join(target)];
    dirs.extend(corpus.iter().map(|c| root.join("tests/bad_inputs").join(c)));
    let inputs = files(&dirs);
    let mut panicked = Vec::new();
    for path in &inputs {
        let bytes = fs::read(path).expect("readable regression input");
        if catch_unwind(AssertUnwindSafe(|| check(&bytes))).is_err() {
            panicked.push(path.display().to_string());
        }
    }
    assert!(panicked.is_empty(), "{target} panicked on: {panicked:?}");
    inputs.len()
}

#[test]
fn metric_csv_regressions() {
    let n = replay(
        "metric_csv",
        &["metric_csv", "stall_csv", "valid"],
        metric_csv::run,
    );
    assert!(n >= 20, "only {n} inputs replayed");
}

#[test]
fn stall_csv_regressions() {
    let n = replay(
        "stall_csv",
        &["stall_csv", "metric_csv", "valid"],
        stall_csv::run,
    );
    assert!(n >= 20, "only {n} inputs replayed");
}

#[test]
fn roofline_profile_regressions() {
    let n = replay(
        "roofline_profile",
        &["metric_csv", "valid"],
        roofline_profile::run,
    );
    assert!(n >= 20, "only {n} inputs replayed");
}

#[test]
fn device_config_regressions() {
    let n = replay(
        "device_config",
        &["device_config", "valid"],
        device_config::run,
    );
    assert!(n >= 10, "only {n} inputs replayed");
}

#[test]
fn trace_json_regressions() {
    let n = replay("trace_json", &["trace_json", "valid"], trace_json::run);
    assert!(n >= 10, "only {n} inputs replayed");
}

#[test]
fn kineto_json_regressions() {
    let n = replay("kineto_json", &["trace_json", "valid"], kineto_json::run);
    assert!(n >= 10, "only {n} inputs replayed");
}

#[test]
fn gzip_trace_regressions() {
    let n = replay("gzip_trace", &["trace_json", "valid"], gzip_trace::run);
    assert!(n >= 10, "only {n} inputs replayed");
}

#[test]
fn pftrace_regressions() {
    let n = replay("pftrace", &[], pftrace::run);
    assert!(n >= 6, "only {n} inputs replayed");
}

#[test]
fn shader_dump_regressions() {
    let n = replay(
        "shader_dump",
        &["shader_dump", "valid/dump"],
        shader_dump::run,
    );
    assert!(n >= 10, "only {n} inputs replayed");
}

#[test]
fn ini_schema_regressions() {
    let n = replay("ini_schema", &["ini_schema", "valid"], ini_schema::run);
    assert!(n >= 10, "only {n} inputs replayed");
}

#[test]
fn category_schema_regressions() {
    let n = replay(
        "category_schema",
        &["json_schema", "valid"],
        category_schema::run,
    );
    assert!(n >= 10, "only {n} inputs replayed");
}

#[test]
fn summary_text_regressions() {
    let n = replay(
        "summary_text",
        &["summary_text", "valid"],
        summary_text::run,
    );
    assert!(n >= 10, "only {n} inputs replayed");
}

#[test]
fn summary_tarball_regressions() {
    let n = replay(
        "summary_tarball",
        &["tarball", "valid"],
        summary_tarball::run,
    );
    assert!(n >= 10, "only {n} inputs replayed");
}
