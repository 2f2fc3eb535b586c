//! `analyze --result-dir DIR` (docs/analyze.md#result-dir): metric files of
//! a result-dir tree keyed by (rank, device).
//!
//! `testdata/resultdir/metrics_tree`: generated `--seed 1|2|3 metrics
//! --mode query --no-device-banner` files (testdata/resultdir/README.md) written as rank 0 device 0 (2 kernels),
//! rank 1 device 0 (3 kernels) and rank 1 device 1 (1 kernel, 2 instances).

use crate::common::analyze;
use std::path::{Path, PathBuf};

fn tree() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/resultdir/metrics_tree")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn listing_keeps_ranks_with_the_same_device_apart() {
    let dir = tempfile::tempdir().unwrap();
    let tree = tree();
    let out = analyze(dir.path(), &["--result-dir", "-l", tree.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listing = text(&out.stdout);
    let labels: Vec<&str> = listing
        .lines()
        .filter(|l| l.starts_with("Device"))
        .collect();
    assert_eq!(
        labels,
        ["Device 0 (rank 0)", "Device 0 (rank 1)", "Device 1"]
    );
    // Each section is the single file's listing.
    let single = analyze(
        dir.path(),
        &[
            "-l",
            tree.join("rank_1.app.101/metrics/metrics_0.csv")
                .to_str()
                .unwrap(),
        ],
    );
    let single = text(&single.stdout);
    let body = single.strip_prefix("Device 0\n").unwrap();
    assert!(
        listing.contains(&format!("Device 0 (rank 1)\n{body}Device 1\n")),
        "{listing}"
    );
}

#[test]
fn a_device_of_several_ranks_needs_rank() {
    let dir = tempfile::tempdir().unwrap();
    let tree = tree();
    let t = tree.to_str().unwrap();
    let chart = [
        "-o",
        "c.svg",
        "--data",
        "d.csv",
        "-m",
        "GpuTime[ns]",
        "-y",
        "t",
    ];
    let mut args = vec!["--result-dir"];
    args.extend_from_slice(&chart);
    args.push(t);
    let out = analyze(dir.path(), &args);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("analyze: {t}: device 0 exists in ranks 0, 1; choose one with --rank\n")
    );
    assert!(!dir.path().join("c.svg").exists());
    // --rank 1: instance 1 of each of rank 1's three kernels.
    let mut args = vec!["--result-dir", "--rank", "1"];
    args.extend_from_slice(&chart);
    args.push(t);
    let out = analyze(dir.path(), &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let data = std::fs::read_to_string(dir.path().join("d.csv")).unwrap();
    assert_eq!(data.lines().count(), 1 + 3);
    assert!(data.contains("triton_poi_fused_add_0"));
    // -d 1 is only in rank 1: no --rank needed.
    let mut args = vec!["--result-dir", "-d", "1", "-i", "0"];
    args.extend_from_slice(&chart);
    args.push(t);
    let out = analyze(dir.path(), &args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let data = std::fs::read_to_string(dir.path().join("d.csv")).unwrap();
    assert_eq!(data.lines().count(), 1 + 2);
    // An unknown device names those there are.
    let mut args = vec!["--result-dir", "-d", "4"];
    args.extend_from_slice(&chart);
    args.push(t);
    let out = analyze(dir.path(), &args);
    assert_eq!(
        text(&out.stderr),
        format!(
            "analyze: {t}: no device 4 (have: Device 0 (rank 0), Device 0 (rank 1), Device 1)\n"
        )
    );
}

#[test]
fn a_tree_without_metric_files_or_no_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("rank_0.app.1")).unwrap();
    std::fs::write(dir.path().join("rank_0.app.1/chrome_trace.json"), "[]").unwrap();
    let out = analyze(dir.path(), &["--result-dir", "-l", "."]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "analyze: .: no metrics/metrics_<n>.csv file with data in this result directory\n"
    );
    let out = analyze(dir.path(), &["--result-dir", "-l", "nowhere"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "analyze: Directory 'nowhere' does not exist\n"
    );
    let out = analyze(dir.path(), &["--rank", "1", "-l", "x.csv"]);
    assert_eq!(out.status.code(), Some(2), "--rank needs --result-dir");
}
