//! `--stats` on hand-made traces whose numbers are worked out here
//! (docs/mergetrace.md#statistics): per rank GPU time, busy %, wall time,
//! launches; per kernel count, total, mean, max, share and the host range
//! it ran under; the events the statistics leave out; the report's rank
//! order.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mergetrace(cwd: &Path, args: &[&str], inputs: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mergetrace"))
        .current_dir(cwd)
        .args(args)
        .args(inputs)
        .output()
        .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

/// Rank 0: two instances of one kernel (two launch shapes) overlapping on
/// two engines, submitted under nested host ranges (an `X` outer, a
/// `B`/`E` inner), and one kernel without a submission link.
const NESTED: &str = r#"{"traceEvents":[
{"ph": "M", "name": "process_name", "pid": 1, "ts": 0.0, "args": {"name": "HOST"}},
{"ph": "X", "tid": 1, "pid": 1, "name": "PyTorch::aten::linear", "cat": "cpu_op", "ts": 100.0, "dur": 50.0},
{"ph": "B", "tid": 1, "pid": 1, "name": "dnnl::primitive::execute::matmul", "cat": "cpu_op", "ts": 110.0},
{"ph": "s", "tid": 1, "pid": 1, "name": "dep", "cat": "Flow_H2D_1_0", "ts": 111.0, "id": 1},
{"ph": "E", "tid": 1, "pid": 1, "name": "dnnl::primitive::execute::matmul", "cat": "cpu_op", "ts": 120.0},
{"ph": "s", "tid": 1, "pid": 1, "name": "dep", "cat": "Flow_H2D_2_0", "ts": 130.0, "id": 2},
{"ph": "X", "tid": 9, "pid": 9, "name": "gemm[SIMD8 {1; 1; 1} {64; 1; 1}]", "cat": "gpu_op", "ts": 200.0, "dur": 10.0, "args": {"id": "1"}},
{"ph": "X", "tid": 8, "pid": 9, "name": "gemm[SIMD8 {2; 1; 1} {64; 1; 1}]", "cat": "gpu_op", "ts": 205.0, "dur": 30.0, "args": {"id": "2"}},
{"ph": "X", "tid": 9, "pid": 9, "name": "copy", "cat": "gpu_op", "ts": 300.0, "dur": 20.0, "args": {"id": "3"}}
]}"#;

#[test]
fn known_answers_of_one_rank() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "app.1.0.json", NESTED);
    let o = mergetrace(dir.path(), &["-o", "m.json", "--stats", "s.csv"], &[input]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // GPU time 10 + 30 + 20 = 60 us; busy: the union [200, 235] + [300,
    // 320] = 55 us of the wall time 100 .. 320 = 220 us (25%).
    // gemm: 40 us, 2/3 of the rank's; 30 us of it submitted at 130 under
    // the PyTorch op only (the oneDNN range ended at 120), 10 us under the
    // oneDNN range (the innermost): the PyTorch op wins with 75%.
    // copy: no submission link, so no range.
    let csv = fs::read_to_string(dir.path().join("s.csv")).unwrap();
    assert_eq!(
        csv,
        "row,rank,file,kernel,category,count,total_us,mean_us,max_us,gpu_share_pct,wall_us,\
         gpu_busy_pct,vs_median_pct,host_range,host_range_share_pct
rank,0,app.1.0.json,,,3,60.000,,,,220.000,25.00,0.0,,
kernel,0,app.1.0.json,gemm,compute,2,40.000,20.000,30.000,66.67,,,,PyTorch::aten::linear,75.00
kernel,0,app.1.0.json,copy,compute,1,20.000,20.000,20.000,33.33,,,,(none),100.00
"
    );
    let report = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        report,
        "\
GPU time per rank (1 rank, median 0.060 ms):
  rank       gpu_ms      wall_ms  busy_%  launches  vs_median  file
     0        0.060        0.220   25.00         3      +0.0%  app.1.0.json
straggler: none: one rank, nothing to compare with (rank 0: 0.060 ms of GPU time)
top kernels (all ranks, by device time):
    total_ms share_%     count     mean_us      max_us  category  kernel  [host range]
       0.040   66.67         2      20.000      30.000  compute   gemm  [PyTorch::aten::linear]
       0.020   33.33         1      20.000      20.000  compute   copy  [(none)]
Successfully merged 1 files into m.json
"
    );
}

#[test]
fn implausible_events_are_left_out_with_one_warning_per_input() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "app.1.0.json",
        r#"{"traceEvents":[
{"ph": "X", "tid": 1, "pid": 1, "name": "host", "cat": "cpu_op", "ts": 100.0, "dur": 200.0},
{"ph": "X", "tid": 9, "pid": 9, "name": "gemm", "cat": "gpu_op", "ts": 200.0, "dur": 10.0},
{"ph": "X", "tid": 9, "pid": 9, "name": "gemm", "cat": "gpu_op", "ts": 220.0, "dur": -10.0},
{"ph": "X", "tid": 9, "pid": 9, "name": "gemm", "cat": "gpu_op", "ts": 1e400, "dur": 1.0},
{"ph": "X", "tid": 9, "pid": 9, "name": "gemm", "cat": "gpu_op", "ts": 240.0, "dur": 0.0},
{"ph": "X", "tid": 1, "pid": 1, "name": "host", "cat": "cpu_op", "ts": 100.0, "dur": 1e400}
]}"#,
    );
    let o = mergetrace(dir.path(), &["-o", "m.json", "--stats", "s.csv"], &[input]);
    assert!(o.status.success());
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("mergetrace: warning: ")
            && err.contains("app.1.0.json: 4 implausible events left out of the statistics (")
            && err.contains("1 negative duration")
            && err.contains("2 time out of range")
            && err.contains("1 zero-length kernel"),
        "{err}"
    );
    let csv = fs::read_to_string(dir.path().join("s.csv")).unwrap();
    assert!(
        csv.contains("\nrank,0,app.1.0.json,,,1,10.000,,,,200.000,5.00,0.0,,\n"),
        "{csv}"
    );
    // The merged trace still holds every event.
    let merged = fs::read_to_string(dir.path().join("m.json")).unwrap();
    assert_eq!(merged.matches("\"ph\"").count(), 6);
}

/// A rank of `ms` ms of GPU time: one kernel under one host call.
fn rank_trace(ms: u32) -> String {
    format!(
        r#"{{"traceEvents":[
{{"ph": "X", "tid": 1, "pid": 1, "name": "host", "cat": "cpu_op", "ts": 0.0, "dur": 100000.0}},
{{"ph": "X", "tid": 9, "pid": 9, "name": "k", "cat": "gpu_op", "ts": 10.0, "dur": {}.0}}
]}}"#,
        ms * 1000
    )
}

#[test]
fn ranks_are_reported_in_rank_order_as_tracestat_does() {
    let dir = tempfile::tempdir().unwrap();
    // Given as a shell glob lists them: rank 10 before rank 2.
    let inputs = vec![
        write(dir.path(), "app.1.10.json", &rank_trace(3)),
        write(dir.path(), "app.1.2.json", &rank_trace(1)),
        write(dir.path(), "app.1.9.json", &rank_trace(2)),
    ];
    let o = mergetrace(dir.path(), &["-o", "m.json", "--stats"], &inputs);
    assert!(o.status.success());
    let report = String::from_utf8(o.stdout).unwrap();
    let ranks: Vec<&str> = report
        .lines()
        .skip(2)
        .take(3)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(ranks, ["2", "9", "10"], "{report}");
    assert!(
        report.contains(
            "\nstraggler: rank 10: 3.000 ms of GPU time, +50.0% against the median rank (2.000 ms)\n"
        ),
        "{report}"
    );
    // The merged trace keeps the given order.
    let merged = fs::read_to_string(dir.path().join("m.json")).unwrap();
    assert!(merged.find("3000.0").unwrap() < merged.find("1000.0").unwrap());
}

#[test]
fn a_reader_that_stops_early_is_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "app.1.0.json", NESTED);
    let mut child = Command::new(env!("CARGO_BIN_EXE_mergetrace"))
        .current_dir(dir.path())
        .args(["-o", "m.json", "--stats", "s.csv"])
        .arg(&input)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // `mergetrace ... | head -0`: the reader is gone before the report.
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(dir.path().join("m.json").exists() && dir.path().join("s.csv").exists());
}

/// Two inputs of one rank are both reported, with the warning tracestat
/// gives for them: the report would otherwise show one rank twice without
/// a word.
#[test]
fn two_inputs_of_one_rank_are_said() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("b")).unwrap();
    let inputs = vec![
        write(dir.path(), "app.1.3.json", &rank_trace(1)),
        write(&dir.path().join("b"), "app.2.3.json", &rank_trace(2)),
    ];
    let o = mergetrace(dir.path(), &["-o", "m.json", "--stats"], &inputs);
    assert!(o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.matches("rank 3 is in both").count(), 1, "{stderr}");
    assert!(stderr.starts_with("mergetrace: warning: "), "{stderr}");
    // Without --stats nothing is reported per rank: nothing to say.
    let o = mergetrace(dir.path(), &["-o", "n.json"], &inputs);
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("in both"));
}
