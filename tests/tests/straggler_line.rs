//! The median-rank comparison of `mergetrace --stats` stays in tracestat
//! (docs/tracestat.md#stragglers): on the same traces, tracestat's third
//! line is mergetrace's straggler line, word for word; with one rank
//! neither names a straggler.

use std::path::PathBuf;
use std::process::Command;

use unitrace_system_tests::{repo_root, tool_binary};

fn traces(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
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

#[test]
fn tracestat_prints_the_median_comparison_of_mergetrace_stats() {
    // Generated traces (straggler rank 1), as JSON and as .pftrace.
    for (dir, ext) in [
        ("testdata/tracestat/gen", "json"),
        ("testdata/tracestat/gen-pftrace", "pftrace"),
    ] {
        let inputs = traces(dir, ext);
        assert_eq!(inputs.len(), 3);
        let out = tempfile::tempdir().unwrap();
        let merged = out.path().join(format!("m.{ext}"));
        let m = stdout(
            "mergetrace",
            &["-o".as_ref(), merged.as_os_str(), "--stats".as_ref()],
            &inputs,
        );
        let line = m
            .lines()
            .find(|l| l.starts_with("straggler: "))
            .unwrap_or_else(|| panic!("no straggler line: {m}"));
        let t = stdout("tracestat", &[], &inputs);
        let second = t.lines().nth(2).unwrap();
        assert_eq!(
            second.strip_prefix("GPU time against the median: "),
            line.strip_prefix("straggler: "),
            "{dir}"
        );
        assert!(line.starts_with("straggler: rank 1: "), "{line}");
    }
}

#[test]
fn one_rank_is_no_straggler_in_either_tool() {
    for (dir, ext) in [
        ("testdata/tracestat/gen", "json"),
        ("testdata/tracestat/gen-pftrace", "pftrace"),
    ] {
        let inputs = traces(dir, ext)[..1].to_vec();
        let out = tempfile::tempdir().unwrap();
        let merged = out.path().join(format!("m.{ext}"));
        let m = stdout(
            "mergetrace",
            &["-o".as_ref(), merged.as_os_str(), "--stats".as_ref()],
            &inputs,
        );
        let line = m
            .lines()
            .find(|l| l.starts_with("straggler: "))
            .unwrap_or_else(|| panic!("no straggler line: {m}"));
        let t = stdout("tracestat", &[], &inputs);
        let lines: Vec<&str> = t.lines().take(3).collect();
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
