//! PyTorch profiler (Kineto) runs through compare: HTA's `trace_diff` and
//! `trace_compare` pairs (testdata/kineto/README.md), gzipped, as
//! directories and as files; the expected times are summed here from the
//! traces' JSON.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn kineto(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/kineto")
        .join(rel)
}

fn compare_json(args: &[&Path]) -> (Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.json");
    let o = Command::new(env!("CARGO_BIN_EXE_compare"))
        .args(args)
        .arg("--json")
        .arg(&out)
        .arg("-q")
        .output()
        .unwrap();
    let doc =
        serde_json::from_slice(&std::fs::read(&out).unwrap_or_default()).unwrap_or(Value::Null);
    (o, doc)
}

/// Device time (µs) per name of the `kernel`, `gpu_memcpy` and
/// `gpu_memset` events of a gzipped trace (integer µs in these traces).
fn device_time(path: &Path) -> BTreeMap<String, f64> {
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut out = BTreeMap::new();
    for e in doc["traceEvents"].as_array().unwrap() {
        if ["kernel", "gpu_memcpy", "gpu_memset"].contains(&e["cat"].as_str().unwrap_or("")) {
            *out.entry(e["name"].as_str().unwrap().to_string())
                .or_insert(0.0) += e["dur"].as_f64().unwrap();
        }
    }
    out
}

fn kernel_row<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["section"] == "kernel")
        .unwrap()["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no kernel row {name}"))
}

#[test]
fn htas_trace_diff_pair() {
    let (base, cand) = (
        kineto("hta/trace_diff/control"),
        kineto("hta/trace_diff/test"),
    );
    let (o, doc) = compare_json(&[&base, &cand]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(doc["kind"], "traces");
    let b = device_time(&base.join("control.json.gz"));
    let c = device_time(&cand.join("test.json.gz"));
    let total = |m: &BTreeMap<String, f64>| m.values().sum::<f64>();
    assert!((doc["baseline_total_us"].as_f64().unwrap() - total(&b)).abs() < 1e-6);
    assert!((doc["candidate_total_us"].as_f64().unwrap() - total(&c)).abs() < 1e-6);
    assert_eq!(total(&b), 501_567.0);
    // The largest change: device-to-device copies, 2.735 ms -> 92.932 ms.
    let dtod = "Memcpy DtoD (Device -> Device)";
    let row = kernel_row(&doc, dtod);
    assert_eq!(row["baseline_us"].as_f64(), Some(b[dtod]));
    assert_eq!(row["candidate_us"].as_f64(), Some(c[dtod]));
    assert_eq!((b[dtod], c[dtod]), (2735.0, 92932.0));
    // Kernels only the candidate ran are new, and so on.
    let status = |name: &str| kernel_row(&doc, name)["status"].clone();
    assert_eq!(status("volta_sgemm_128x32_nt"), "new");
    assert!(!b.contains_key("volta_sgemm_128x32_nt"));
    // The same pair as the files themselves.
    let (o, files) = compare_json(&[&base.join("control.json.gz"), &cand.join("test.json.gz")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(files["sections"], doc["sections"]);
}

#[test]
fn htas_trace_compare_pair_one_kernel_fewer() {
    let (o, doc) = compare_json(&[
        &kineto("hta/trace_compare/base"),
        &kineto("hta/trace_compare/test"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(doc["baseline_total_us"].as_f64(), Some(1694.0));
    assert_eq!(doc["candidate_total_us"].as_f64(), Some(1690.0));
    // One 4 µs elementwise kernel fewer.
    let rows = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["section"] == "kernel")
        .unwrap()["rows"]
        .as_array()
        .unwrap();
    let changed: Vec<&Value> = rows
        .iter()
        .filter(|r| r["delta_us"].as_f64() != Some(0.0))
        .collect();
    assert_eq!(changed.len(), 1, "{changed:?}");
    assert_eq!(changed[0]["delta_us"].as_f64(), Some(-4.0));
}

#[test]
fn a_run_against_itself_and_a_tarball_is_still_a_tarball() {
    // Our recorded 4-rank run against itself: nothing changes.
    let run = kineto("recorded/planted");
    let (o, doc) = compare_json(&[&run, &run]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for s in doc["sections"].as_array().unwrap() {
        for r in s["rows"].as_array().unwrap() {
            assert_eq!(r["delta_us"].as_f64(), Some(0.0), "{r}");
        }
    }
    // gzip that holds no trace is not taken for one.
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("x.json.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut e, b"hello").unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let (o, _) = compare_json(&[&gz, &gz]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("compare: "), "{stderr}");
}

/// Two runs of one loop that differ only by rank 1's planted matmuls
/// (testdata/kineto/recorded/README.md#what-if-against-a-re-run): every
/// host range of the one is matched in the other but the planted ones. The
/// PyTorch profiler names bound methods with their object's address
/// (`<built-in method run_backward of ... object at 0x7f02...>`), which
/// differs in every process: without it (docs/formats.md#kineto-json-reading)
/// run_backward and the rest are one name in both runs, not 84 "new" and
/// 87 "vanished" ranges.
#[test]
fn runs_of_one_loop_match_their_python_methods_across_processes() {
    let rerun = kineto("recorded/rerun");
    let (ranges, rows) = host_ranges(&rerun.join("slow2"), &rerun.join("slow0"));
    assert_eq!(ranges["new"], 0);
    assert_eq!(
        names_with(&rows, "vanished"),
        [
            "<built-in method matmul of Tensor object>",
            "aten::matmul",
            "planted_slow_matmul"
        ]
    );
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"<built-in method run_backward of torch._C._EngineBase object>"));
    assert!(
        names.iter().all(|n| !n.contains(" object at 0x")),
        "{names:?}"
    );
    // The same on the 4-rank recordings: what the planted run has that
    // the clean one lacks is exactly the ranges of the planted problems.
    let recorded = kineto("recorded");
    let (ranges, rows) = host_ranges(&recorded.join("clean"), &recorded.join("planted"));
    assert_eq!(ranges["vanished"], 0);
    assert_eq!(
        names_with(&rows, "new"),
        [
            "<built-in function sleep>",
            "<built-in method matmul of Tensor object>",
            "aten::matmul",
            "planted_sleep",
            "planted_slow_matmul"
        ]
    );
}

/// compare's `host_range` section of `base` against `cand`, and its rows.
fn host_ranges(base: &Path, cand: &Path) -> (Value, Vec<Value>) {
    let (o, doc) = compare_json(&[base, cand]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ranges = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["section"] == "host_range")
        .unwrap()
        .clone();
    let rows = ranges["rows"].as_array().unwrap().clone();
    (ranges, rows)
}

/// The names of the rows with that status, sorted.
fn names_with<'a>(rows: &'a [Value], status: &str) -> Vec<&'a str> {
    let mut names: Vec<&str> = rows
        .iter()
        .filter(|r| r["status"] == status)
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    names
}
