//! Runs with steps (docs/compare.md#items, docs/compare.md#verdict): the
//! `step` section matches median step against median step, and the median
//! step decides the verdict when the total does not.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// One rank of `steps` steps of `len` us, each a `PyTorch::ProfilerStep#i`
/// range holding one 40 us `gemm` kernel: the kernel time does not depend
/// on `len`.
fn write_run(dir: &Path, len: u64, steps: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let base = 1_700_000_000_000_000u64;
    let mut t = String::from("{ \"traceEvents\":[\n");
    t.push_str(r#"{"ph": "M", "name": "process_name", "pid": 1000, "ts": 1700000000000000, "args": {"name": "RANK 0 HOST<node0>"}},"#);
    t.push('\n');
    t.push_str(r#"{"ph": "M", "name": "process_name", "pid": 4294967295, "ts": 1700000000000000, "args": {"name": "RANK 0 DEVICE<node0>[GPU] 0:0:0:0 #0"}}"#);
    for i in 0..steps {
        let s = base + i * len;
        let _ = write!(
            t,
            ",\n{{\"ph\": \"X\", \"tid\": 1000, \"pid\": 1000, \"name\": \"PyTorch::ProfilerStep#{i}\", \"cat\": \"cpu_op\", \"ts\": {s}, \"dur\": {len}}}\
             ,\n{{\"ph\": \"X\", \"tid\": 4294967295, \"pid\": 4294967295, \"name\": \"gemm\", \"cat\": \"gpu_op\", \"ts\": {}, \"dur\": 40, \"args\": {{\"id\": \"{}\"}}}}",
            s + 10,
            i + 1
        );
    }
    t.push_str("\n]\n}\n");
    std::fs::write(dir.join("run.1000.0.json"), t).unwrap();
}

fn compare(base: &Path, cand: &Path) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.json");
    let o = Command::new(env!("CARGO_BIN_EXE_compare"))
        .args([base, cand])
        .arg("--json")
        .arg(&out)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
}

#[test]
fn median_step_against_median_step_decides_when_the_total_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let (base, slow, more) = (
        dir.path().join("base"),
        dir.path().join("slow"),
        dir.path().join("more"),
    );
    write_run(&base, 100, 4);
    // Steps of 150 us, the same kernels: the total is unchanged.
    write_run(&slow, 150, 4);
    let doc = compare(&base, &slow);
    let section = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["section"] == "step")
        .expect("a step section");
    let row = |name: &str| {
        section["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no row {name}"))
            .clone()
    };
    let median = row("median step");
    assert_eq!(median["status"], "exact");
    assert_eq!(median["baseline_us"].as_f64(), Some(100.0));
    assert_eq!(median["candidate_us"].as_f64(), Some(150.0));
    assert_eq!(median["change_pct"].as_f64(), Some(50.0));
    assert_eq!(median["significant"], true);
    assert_eq!(
        row("rank 0 median step")["candidate_us"].as_f64(),
        Some(150.0)
    );
    assert_eq!(doc["verdict"], "worse");
    let reason = doc["verdict_reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "The median step is significantly slower (100.000 us -> 150.000 us, +50.0%)"
        ),
        "{reason}"
    );
    // Other step ids and another count: still median against median.
    write_run(&more, 100, 7);
    let doc = compare(&slow, &more);
    assert_eq!(doc["verdict"], "worse", "more kernels: the total decides");
    let doc = compare(&base, &base);
    assert_eq!(doc["verdict"], "unchanged");
}
