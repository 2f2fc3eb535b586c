//! Helpers shared by the tracestat integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub mod ranks;

/// Whether this run is CI's: `CI` set to anything but empty, `0` or
/// `false` (`.ci/run` sets it).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"))
}

/// A test whose launcher or engine is missing here: in CI a failure (the
/// suite must not pass without running it), elsewhere a loud skip.
/// Returns so that the caller can `return` (tests/README.md#services).
pub fn unavailable(what: &str) {
    assert!(
        !in_ci(),
        "{what}\n(CI is set: scripts/test.sh installs and starts what this test needs; it must run)"
    );
    loud(&format!(
        "SKIPPED: {what}\n(run scripts/test.sh as root, which installs and starts it; under CI=1 this fails)"
    ));
}

/// A message on the real stderr: not captured by the test harness, so that
/// a skipped test shows in a passing run.
pub fn loud(what: &str) {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr().lock(),
        "\n**********\n{what}\n**********\n"
    );
}

pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/tracestat")
        .join(name)
}

pub fn gen_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data("gen"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    v
}

pub fn coll_files() -> Vec<PathBuf> {
    (0..4)
        .map(|r| data(&format!("coll.{}.{}.json", 2000 + r, r)))
        .collect()
}

pub fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tracestat"))
        .args(args)
        .output()
        .expect("run tracestat")
}

/// One `--partial` per input file, written into `dir` as `p<i>.json`, with
/// `extra` options; their paths.
pub fn partial_per_file(files: &[PathBuf], dir: &std::path::Path, extra: &[&str]) -> Vec<PathBuf> {
    files
        .iter()
        .enumerate()
        .map(|(i, file)| {
            let p = dir.join(format!("p{i}.json"));
            let mut args: Vec<&std::ffi::OsStr> =
                vec![file.as_os_str(), "--partial".as_ref(), p.as_os_str()];
            args.extend(extra.iter().map(std::ffi::OsStr::new));
            let out = run(&args);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            p
        })
        .collect()
}

/// Runs tracestat with `--json` into a temp dir and returns the document,
/// stdout and stderr.
pub fn report(inputs: &[PathBuf], extra: &[&str]) -> (Value, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut args: Vec<&std::ffi::OsStr> = inputs.iter().map(|p| p.as_os_str()).collect();
    args.push("--json".as_ref());
    args.push(json.as_os_str());
    for e in extra {
        args.push(e.as_ref());
    }
    let out = run(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "tracestat failed: {stderr}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    (
        doc,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
    )
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-6, "{what}: {a} != {b}");
}

/// Within `rel` relative error (percentiles come from a 1% log sketch).
pub fn near(a: f64, b: f64, rel: f64, what: &str) {
    assert!(
        (a - b).abs() <= rel * b.abs(),
        "{what}: {a} not within {rel} of {b}"
    );
}

/// The row of `table` whose `key` field equals `value`.
pub fn row<'a>(doc: &'a Value, table: &str, key: &str, value: &str) -> &'a Value {
    doc[table]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[key] == value)
        .unwrap_or_else(|| panic!("no {table} row with {key} = {value}"))
}

/// Runs the Python program `script` with `args` and returns the JSON
/// document it prints (the engines are Python packages: duckdb, polars,
/// dask, pyspark, installed by scripts/test.sh).
pub fn python_json(script: &str, args: &[&std::ffi::OsStr]) -> Value {
    let o = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 is needed to read the events dataset");
    assert!(
        o.status.success(),
        "python3 failed (scripts/test.sh installs duckdb, polars, dask[dataframe] and pyarrow with pip --user):\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "python3 printed no JSON ({e}):\n{}",
            String::from_utf8_lossy(&o.stdout)
        )
    })
}
