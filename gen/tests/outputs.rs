//! Metric and stall CSVs, shader dumps, summary tarballs and roofline
//! profiles, read back by analyze, summary and roofline without a warning.

use std::path::Path;

use crate::common::{gen, run_clean, s, tool};

fn metrics(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let out = dir.join(name);
    let mut all = vec!["metrics", s(&out), "--kernels", "5", "-q"];
    if !args.contains(&"--instances") {
        all.extend(["--instances", "2"]);
    }
    all.extend_from_slice(args);
    gen(&all);
    out
}

#[test]
fn every_metric_variant_is_listed_by_analyze() {
    let dir = tempfile::tempdir().unwrap();
    let variants: &[(&str, &[&str])] = &[
        ("sampling.csv", &[]),
        ("bmg.csv", &["--device-family", "bmg"]),
        ("query.csv", &["--mode", "query", "--devices", "2"]),
        ("trailing.csv", &["--trailing-comma"]),
        ("unquoted.csv", &["--unquoted-padded-names"]),
        ("general.csv", &["--float-style", "general"]),
        ("empty_rows.csv", &["--empty-kernel-rows", "2"]),
        ("idle.csv", &["--idle-sampling"]),
        ("reshape.csv", &["--reshape"]),
        (
            "truncated.csv",
            &["--truncated-last-instance", "--devices", "2"],
        ),
        ("no_banner.csv", &["--no-device-banner"]),
        ("validity.csv", &["--validity-columns"]),
    ];
    for (name, args) in variants {
        let csv = metrics(dir.path(), name, args);
        let listing = run_clean(tool("analyze").arg("-l").arg(&csv), &[]);
        assert!(listing.contains("Device 0"), "{name}: {listing}");
        // Five kernels, two instances each (the reshape adds one relaunch).
        let kernels = listing
            .lines()
            .filter(|l| l.trim_start().starts_with('"'))
            .count();
        assert!(kernels >= 4, "{name}: {listing}");
    }
}

#[test]
fn size_grows_a_metric_file_to_the_requested_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let csv = metrics(dir.path(), "big.csv", &["--size", "2MB", "--devices", "2"]);
    let n = std::fs::metadata(&csv).unwrap().len() as f64;
    assert!((2e6..2.1e6).contains(&n), "{n} bytes");
}

#[test]
fn flagged_reports_are_left_out_by_analyze() {
    let dir = tempfile::tempdir().unwrap();
    let csv = metrics(
        dir.path(),
        "v.csv",
        &["--validity-columns", "--instances", "12", "--seed", "6"],
    );
    // About 8% of the reports carry a flag, each the value of its bit.
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("Kernel,"))
        .unwrap()
        .split(',')
        .collect();
    let flags = [
        "ReportError",
        "OverrunOccured",
        "QuerySplitOccurred",
        "MidQueryCtxSwitch",
        "MidQueryC6",
        "MidQueryFreqChange",
    ];
    let cols: Vec<usize> = flags
        .iter()
        .map(|f| header.iter().position(|h| h == f).unwrap())
        .collect();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with('"'))
        .map(|l| {
            l.rsplit(',')
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect()
        })
        .collect();
    let flagged = rows
        .iter()
        .filter(|r| {
            let off = r.len() - header.len();
            cols.iter().any(|&c| r[c + off] != "0")
        })
        .count();
    assert!(
        flagged >= 1 && flagged * 4 < rows.len(),
        "{flagged} of {}",
        rows.len()
    );
    let out = tool("analyze")
        .args([
            "-k",
            "gen_conv[SIMD16 {28; 28; 8} {16; 1; 1}]",
            "-i",
            "0",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "pct",
            "-o",
        ])
        .arg(dir.path().join("c.pdf"))
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn stall_report_walks_back_to_every_setter() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("stalls.csv");
    let dump = dir.path().join("dump");
    gen(&[
        "--seed",
        "3",
        "stalls",
        s(&csv),
        "--dump",
        s(&dump),
        "--kernels",
        "4",
        "--instructions",
        "80",
        "-q",
    ]);
    let asm = std::fs::read_dir(&dump)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "asm")
        })
        .count();
    // Three kernels with an .asm (one compiled twice), one compiled but
    // never sampled; the fourth sampled kernel has none.
    assert_eq!(asm, 5);
    let report = dir.path().join("report.txt");
    let mut cmd = tool("analyze");
    cmd.arg("-s")
        .arg(&dump)
        .arg("-r")
        .arg(&report)
        .arg("-o")
        .arg(dir.path().join("s.pdf"))
        .arg(&csv);
    run_clean(
        &mut cmd,
        &["no .asm file for kernel `anonymous namespace'::reduce_rows<float>"],
    );
    let text = std::fs::read_to_string(&report).unwrap();
    assert_eq!(
        text.matches("\nKernel: ").count() + usize::from(text.starts_with("Kernel: ")),
        3,
        "{text}"
    );
    assert!(text.contains("is stalled potentially by"));
    // The retry (longer name) is the one picked.
    assert!(text.contains("_1_simd16_entry_0001.asm"), "{text}");
}

#[test]
fn summaries_are_read_by_summary() {
    let dir = tempfile::tempdir().unwrap();
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/LLaMA.json");
    for (name, args) in [
        ("plain.tgz", &[][..]),
        (
            "rd.tgz",
            &[
                "--layout",
                "result-dir",
                "--launcher-files",
                "1",
                "--timeline",
            ][..],
        ),
        (
            "twice.tgz",
            &[
                "--ccl-summary",
                "twice",
                "--kernel-submission",
                "--verbose-names",
            ][..],
        ),
    ] {
        let tgz = dir.path().join(name);
        let mut all = vec![
            "summaries",
            s(&tgz),
            "--ranks",
            "4",
            "--kernels",
            "24",
            "--steps",
            "50",
            "--straggler",
            "1",
            "-q",
        ];
        all.extend_from_slice(args);
        gen(&all);
        let per_rank = dir.path().join(format!("{name}.csv"));
        let mut cmd = tool("summary");
        cmd.arg("--input")
            .arg(&tgz)
            .arg("--schema")
            .arg(&schema)
            .arg("--output")
            .arg(dir.path().join("s.json"))
            .arg("--per-rank")
            .arg(&per_rank);
        run_clean(&mut cmd, &["summary: note:"]);
        let table = std::fs::read_to_string(&per_rank).unwrap();
        let rows: Vec<&str> = table.lines().skip(1).collect();
        assert_eq!(rows.len(), 4, "{name}: {table}");
        // The straggler's matmul time stands out.
        let header: Vec<&str> = table.lines().next().unwrap().split(',').collect();
        let matmul = header.iter().position(|h| *h == "matmul_time_ns").unwrap();
        let times: Vec<f64> = rows
            .iter()
            .map(|r| r.split(',').nth(matmul).unwrap().parse().unwrap())
            .collect();
        let others = (times[0] + times[2] + times[3]) / 3.0;
        assert!(times[1] / others > 1.3, "{name}: {times:?}");
    }
}

#[test]
fn roofline_profiles_of_every_format_are_read_by_roofline() {
    let dir = tempfile::tempdir().unwrap();
    for format in ["new", "v1", "old"] {
        let c = dir.path().join(format!("{format}_c.txt"));
        let m = dir.path().join(format!("{format}_m.txt"));
        gen(&[
            "roofline",
            "--compute",
            s(&c),
            "--memory",
            s(&m),
            "--format",
            format,
            "--kernels",
            "5",
            "-q",
        ]);
        let page = dir.path().join(format!("{format}.html"));
        let mut cmd = tool("roofline");
        cmd.arg("--compute")
            .arg(&c)
            .arg("--memory")
            .arg(&m)
            .args(["--device", "pvc", "--output"])
            .arg(&page);
        let stdout = run_clean(&mut cmd, &[]);
        assert_eq!(stdout.lines().count(), 1 + 5 + 7, "{format}: {stdout}");
        assert!(page.is_file());
    }
}
