//! `mergetrace --stats` runs tracestat's analyses (docs/mergetrace.md#statistics):
//! on the same traces, JSON and `.pftrace`, its table and report carry
//! the numbers of tracestat's tables — per rank GPU time, wall time,
//! busy %, launches and the deviation from the median; per kernel count,
//! total and host range — and its straggler line is tracestat's median
//! comparison, word for word (docs/tracestat.md#stragglers); with one
//! rank neither names a straggler.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use unitrace_system_tests::{repo_root, tool_binary};

fn traces(dir: &str, ext: &str) -> Vec<PathBuf> {
    traces_named(dir, "", ext)
}

/// The files of `dir` whose name starts with `prefix` and ends with
/// `.ext`, sorted.
fn traces_named(dir: &str, prefix: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    v.sort();
    v
}

/// The input sets: generated ranks with a straggler (JSON and the same
/// run as `.pftrace`), hand-made ranks with collectives, one merged trace
/// of several ranks, two real ranks.
fn input_sets() -> Vec<(Vec<PathBuf>, &'static str)> {
    vec![
        (traces("testdata/tracestat/gen", "json"), "json"),
        (
            traces("testdata/tracestat/gen-pftrace", "pftrace"),
            "pftrace",
        ),
        (traces_named("testdata/tracestat", "coll.", "json"), "json"),
        (
            traces_named("testdata/tracestat", "merged.", "json"),
            "json",
        ),
        (traces("testdata/trace/two", "json"), "json"),
    ]
}

fn stdout(tool: &str, args: &[&std::ffi::OsStr], inputs: &[PathBuf]) -> String {
    let o = Command::new(tool_binary(tool))
        .args(args)
        .args(inputs)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{tool}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// A CSV file as rows of named fields.
fn rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// A number of the CSVs, rounded to `decimals`.
fn rounded(text: &str, decimals: usize) -> String {
    let v: f64 = text
        .parse()
        .unwrap_or_else(|_| panic!("not a number: {text}"));
    format!("{v:.decimals$}")
}

/// Microseconds with 3 decimals as integer nanoseconds.
fn ns(text: &str) -> i64 {
    let (whole, frac) = text.split_once('.').unwrap_or((text, "000"));
    assert_eq!(frac.len(), 3, "{text}");
    whole.parse::<i64>().unwrap() * 1000 + frac.parse::<i64>().unwrap()
}

/// What both tools say about one set of traces.
struct Both {
    mergetrace_report: String,
    mergetrace_rows: Vec<BTreeMap<String, String>>,
    tracestat_report: String,
    tracestat_tables: PathBuf,
    _dir: tempfile::TempDir,
}

fn run_both(inputs: &[PathBuf], ext: &str) -> Both {
    let dir = tempfile::tempdir().unwrap();
    let merged = dir.path().join(format!("m.{ext}"));
    let csv = dir.path().join("s.csv");
    let mergetrace_report = stdout(
        "mergetrace",
        &[
            "-o".as_ref(),
            merged.as_os_str(),
            "--stats".as_ref(),
            csv.as_os_str(),
        ],
        inputs,
    );
    let tables = dir.path().join("tables");
    let tracestat_report = stdout("tracestat", &["--csv".as_ref(), tables.as_os_str()], inputs);
    Both {
        mergetrace_report,
        mergetrace_rows: rows(&csv),
        tracestat_report,
        tracestat_tables: tables,
        _dir: dir,
    }
}

#[test]
fn mergetrace_stats_carries_the_numbers_of_tracestat() {
    for (inputs, ext) in input_sets() {
        assert!(!inputs.is_empty());
        let b = run_both(&inputs, ext);
        let what = format!("{:?}", inputs[0]);
        let m = &b.mergetrace_rows;
        // Per rank, in the same (rank) order.
        let m_ranks: Vec<_> = m.iter().filter(|r| r["row"] == "rank").collect();
        let breakdown: Vec<_> = rows(&b.tracestat_tables.join("breakdown.csv"))
            .into_iter()
            .filter(|r| r["device"] == "all")
            .collect();
        let stragglers = rows(&b.tracestat_tables.join("stragglers.csv"));
        assert!(m_ranks.len() >= 2, "{what}");
        assert_eq!(breakdown.len(), m_ranks.len(), "{what}");
        for ((mr, tb), ts) in m_ranks.iter().zip(&breakdown).zip(&stragglers) {
            assert_eq!(mr["rank"], tb["rank"], "{what}");
            assert_eq!(mr["rank"], ts["rank"], "{what}");
            assert_eq!(mr["total_us"], ts["gpu_time_us"], "{what}: GPU time");
            assert_eq!(mr["total_us"], tb["kernel_time_us"], "{what}: GPU time");
            assert_eq!(mr["wall_us"], tb["wall_us"], "{what}: wall time");
            assert_eq!(mr["count"], tb["launches"], "{what}: launches");
            assert_eq!(
                mr["gpu_busy_pct"],
                rounded(&tb["busy_pct"], 2),
                "{what}: busy"
            );
            assert_eq!(
                mr["vs_median_pct"],
                rounded(&ts["vs_median_pct"], 1),
                "{what}: against the median"
            );
        }
        // Per kernel: mergetrace's per-rank rows add up to tracestat's
        // rows over all ranks, exactly (integer nanoseconds).
        let mut m_kernels: BTreeMap<(String, String), (u64, i64)> = BTreeMap::new();
        for r in m.iter().filter(|r| r["row"] == "kernel") {
            let e = m_kernels
                .entry((r["category"].clone(), r["kernel"].clone()))
                .or_default();
            e.0 += r["count"].parse::<u64>().unwrap();
            e.1 += ns(&r["total_us"]);
        }
        let t_kernels = rows(&b.tracestat_tables.join("kernels.csv"));
        let t_map: BTreeMap<(String, String), (u64, i64)> = t_kernels
            .iter()
            .map(|r| {
                (
                    (r["category"].clone(), r["kernel"].clone()),
                    (r["count"].parse().unwrap(), ns(&r["total_us"])),
                )
            })
            .collect();
        assert!(!t_map.is_empty(), "{what}");
        assert_eq!(m_kernels, t_map, "{what}: kernel totals");
        // The top kernels of mergetrace's report are tracestat's, with
        // their host range.
        for k in t_kernels.iter().take(20) {
            assert!(!k["host_range"].is_empty(), "{what}: {k:?}");
            let line = format!("  {}  [{}]\n", k["kernel"], k["host_range"]);
            assert!(b.mergetrace_report.contains(&line), "{what}: {line}");
        }
        // The straggler line: tracestat's median comparison.
        let line = b
            .mergetrace_report
            .lines()
            .find(|l| l.starts_with("straggler: "))
            .unwrap_or_else(|| panic!("no straggler line: {}", b.mergetrace_report));
        let third = b.tracestat_report.lines().nth(2).unwrap();
        assert_eq!(
            third.strip_prefix("GPU time against the median: "),
            line.strip_prefix("straggler: "),
            "{what}"
        );
    }
}

#[test]
fn the_generated_straggler_has_the_most_gpu_time_in_both_formats() {
    for (dir, ext) in [
        ("testdata/tracestat/gen", "json"),
        ("testdata/tracestat/gen-pftrace", "pftrace"),
    ] {
        let b = run_both(&traces(dir, ext), ext);
        assert!(
            b.mergetrace_report.contains("\nstraggler: rank 1: "),
            "{}",
            b.mergetrace_report
        );
    }
}

#[test]
fn one_rank_is_no_straggler_in_either_tool() {
    for (dir, ext) in [
        ("testdata/tracestat/gen", "json"),
        ("testdata/tracestat/gen-pftrace", "pftrace"),
    ] {
        let inputs = traces(dir, ext)[..1].to_vec();
        let b = run_both(&inputs, ext);
        let line = b
            .mergetrace_report
            .lines()
            .find(|l| l.starts_with("straggler: "))
            .unwrap_or_else(|| panic!("no straggler line: {}", b.mergetrace_report));
        let lines: Vec<&str> = b.tracestat_report.lines().take(3).collect();
        assert_eq!(lines[0], "tracestat: 1 rank");
        assert_eq!(
            lines[1],
            "straggler: none: one rank, nothing to compare with"
        );
        assert_eq!(
            lines[2].strip_prefix("GPU time against the median: "),
            line.strip_prefix("straggler: "),
            "{dir}"
        );
        let rest = line
            .strip_prefix("straggler: none: one rank, nothing to compare with (rank 0: ")
            .unwrap_or_else(|| panic!("{line}"));
        // The rank's own GPU time, in ms.
        let ms: f64 = rest
            .strip_suffix(" ms of GPU time)")
            .unwrap_or_else(|| panic!("{line}"))
            .parse()
            .unwrap();
        assert!(ms > 0.0, "{line}");
    }
}
