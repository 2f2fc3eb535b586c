//! Generated traces read back by tracestat and mergetrace: the planted
//! straggler, the steps, the flows, consistent collectives, cut files,
//! result-dir trees, the two formats, clock offsets.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{files, gen, run_clean, s, tool, tracestat_json};

fn trace(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let out = dir.join(name);
    let mut all = vec!["trace", s(&out)];
    all.extend_from_slice(args);
    all.push("-q");
    gen(&all);
    out
}

fn inputs(dir: &Path, ext: &str) -> Vec<String> {
    files(dir, ext)
        .iter()
        .map(|p| p.to_str().unwrap().to_string())
        .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(|x| x.as_str()).collect()
}

#[test]
fn tracestat_finds_the_straggler_the_steps_and_every_flow() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(
        dir.path(),
        "t",
        &[
            "--ranks",
            "4",
            "--events",
            "4000",
            "--steps",
            "5",
            "--straggler",
            "2",
            "--seed",
            "4",
        ],
    );
    let files = inputs(&t, "json");
    assert_eq!(files.len(), 4);
    let (report, stderr) = tracestat_json(dir.path(), &strs(&files), "r.json");
    assert_eq!(stderr, "", "no warning on a clean generated trace");
    assert_eq!(report["ranks"], 4);
    assert_eq!(report["straggler"]["rank"], "2", "{}", report["straggler"]);
    // Every collective of the schedule lines up across ranks: one barrier,
    // then per step the gradient and the loss all-reduce.
    let collectives = report["collectives"].as_array().unwrap();
    assert_eq!(collectives.len(), 1 + 2 * 5);
    assert_eq!(report["collectives_consistent"], collectives.len());
    for c in collectives {
        assert_eq!(c["ranks"], 4);
        if c["name"].as_str().unwrap().starts_with("oneCCL") {
            // The gradient all-reduce waits for the slow rank's compute.
            assert_eq!(c["last_rank"], "2", "{c}");
        }
    }
    // One step range per step, on every rank.
    let steps: Vec<&Value> = report["host_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["name"]
                .as_str()
                .unwrap()
                .starts_with("PyTorch::ProfilerStep#")
        })
        .collect();
    assert_eq!(steps.len(), 5);
    for r in steps {
        assert_eq!(r["calls"], 4);
    }
    // Every device command has its submission (flow) found.
    for l in report["launches"].as_array().unwrap() {
        assert_eq!(l["with_flow"], l["kernels"], "{l}");
        assert_eq!(l["negative_latency"], 0);
    }
    // The straggler's compute is about 1.45x the others'.
    let compute: Vec<f64> = report["stragglers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["compute_us"].as_f64().unwrap())
        .collect();
    let others = (compute[0] + compute[1] + compute[3]) / 3.0;
    let ratio = compute[2] / others;
    assert!(
        (1.3..1.6).contains(&ratio),
        "straggler compute ratio {ratio}"
    );
}

#[test]
fn without_steps_there_are_no_step_ranges_and_no_straggler_is_planted() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(
        dir.path(),
        "t",
        &["--ranks", "3", "--events", "2000", "--straggler", "none"],
    );
    let (report, _) = tracestat_json(dir.path(), &strs(&inputs(&t, "json")), "r.json");
    let names: Vec<&str> = report["host_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.iter().any(|n| n.contains("ProfilerStep")),
        "{names:?}"
    );
    let compute: Vec<f64> = report["stragglers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["compute_us"].as_f64().unwrap())
        .collect();
    let (lo, hi) = compute
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &c| (a.min(c), b.max(c)));
    assert!(hi / lo < 1.1, "no rank is planted slow: {compute:?}");
}

#[test]
fn json_and_pftrace_of_one_seed_give_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(
        dir.path(),
        "t",
        &[
            "--ranks",
            "3",
            "--events",
            "3000",
            "--steps",
            "4",
            "--format",
            "both",
            "--metrics-link",
            "http",
            "--ranges",
            "be",
        ],
    );
    let (mut j, je) = tracestat_json(dir.path(), &strs(&inputs(&t, "json")), "j.json");
    let (mut p, pe) = tracestat_json(dir.path(), &strs(&inputs(&t, "pftrace")), "p.json");
    assert_eq!((je.as_str(), pe.as_str()), ("", ""));
    for r in [&mut j, &mut p] {
        for row in r["breakdown"].as_array_mut().unwrap() {
            row["file"] = Value::Null;
        }
    }
    assert_eq!(j, p);
}

#[test]
fn cut_ranks_are_reported_as_truncated_in_both_formats() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(
        dir.path(),
        "t",
        &[
            "--ranks",
            "4",
            "--events",
            "3000",
            "--format",
            "both",
            "--cut",
            "1:event,2:block",
            "3:header",
        ],
    );
    // A .pftrace cut between records is a valid, shorter trace
    // (docs/formats.md#pftrace-records): only the block cut shows. A JSON
    // rank cut in its header holds no event: among good inputs it is left
    // out of the report with its warning (docs/errors.md), so it is no
    // truncated rank, and the warnings are still one per cut file.
    for (ext, cut, warned) in [("json", &["1", "2"][..], 3), ("pftrace", &["2"][..], 1)] {
        let (report, stderr) = tracestat_json(dir.path(), &strs(&inputs(&t, ext)), "r.json");
        let truncated: Vec<&str> = report["truncated"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["rank"].as_str().unwrap())
            .collect();
        assert_eq!(truncated, cut, "{ext}");
        assert_eq!(
            stderr.matches("cut short (writer killed?)").count(),
            warned,
            "{ext}: {stderr}"
        );
        if ext == "json" {
            assert_eq!(
                stderr.matches("no trace events before the cut").count(),
                1,
                "{stderr}"
            );
        }
    }
    let pf = files(&t, "pftrace");
    let full = std::fs::metadata(&pf[0]).unwrap().len();
    for p in &pf[1..] {
        assert!(
            std::fs::metadata(p).unwrap().len() < full / 2 + full / 3,
            "{} is cut",
            p.display()
        );
    }
    // The event cut ends a JSON file right after an event; the block cut
    // on an 8 KiB boundary.
    let json = files(&t, "json");
    let event_cut = std::fs::read(&json[1]).unwrap();
    assert_eq!(event_cut.last(), Some(&b'}'));
    assert_eq!(std::fs::metadata(&json[2]).unwrap().len() % 8192, 0);
    let header = std::fs::read_to_string(&json[3]).unwrap();
    assert_eq!(header.lines().count(), 2, "{header}");
}

#[test]
fn the_result_dir_tree_is_read_by_tracestat() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(
        dir.path(),
        "results",
        &[
            "--ranks",
            "3",
            "--events",
            "800",
            "--layout",
            "result-dir",
            "--format",
            "pftrace",
        ],
    );
    let mut folders: Vec<String> = std::fs::read_dir(&t)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    folders.sort();
    assert_eq!(folders.len(), 6, "{folders:?}");
    assert!(folders
        .iter()
        .filter(|f| f.contains(".unitrace."))
        .all(|f| t.join(f).join("run_config.json").is_file()));
    let app: Vec<&String> = folders.iter().filter(|f| f.contains(".python.")).collect();
    assert_eq!(app.len(), 3);
    assert!(app
        .iter()
        .all(|f| t.join(f).join("chrome_trace.pftrace").is_file()));
    let report = dir.path().join("r.json");
    run_clean(
        tool("tracestat").args(["-q", "--json", s(&report), "--result-dir", s(&t)]),
        &[],
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(v["ranks"], 3);
    let ranks: Vec<&str> = v["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_str().unwrap())
        .collect();
    assert_eq!(ranks, ["0", "1", "2"]);
}

/// First and last timestamps of a JSON trace (µs, as printed).
fn first_last(path: &Path) -> (f64, f64) {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let ts: Vec<f64> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["ts"].as_f64())
        .collect();
    (ts[0], ts[ts.len() - 1])
}

#[test]
fn clock_offsets_shift_each_rank_by_a_constant() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["--ranks", "4", "--events", "600", "--seed", "9"];
    let plain = trace(dir.path(), "plain", &args);
    let mut shifted_args = args.to_vec();
    shifted_args.extend(["--clock-offset-us", "5000"]);
    let shifted = trace(dir.path(), "shifted", &shifted_args);
    let mut offsets = Vec::new();
    for (a, b) in files(&plain, "json").iter().zip(files(&shifted, "json")) {
        let (a0, a1) = first_last(a);
        let (b0, b1) = first_last(&b);
        let d0 = b0 - a0;
        assert!(
            (d0 - (b1 - a1)).abs() < 0.01,
            "the whole rank moves: {d0} vs {}",
            b1 - a1
        );
        assert!(d0.abs() <= 5000.0, "{d0}");
        assert_eq!(d0.fract(), 0.0, "whole microseconds: {d0}");
        offsets.push(d0);
    }
    assert!(
        offsets.iter().any(|&o| o != offsets[0]),
        "ranks get different offsets: {offsets:?}"
    );
    // With clocks apart, the collectives no longer line up as read.
    let shifted_files = inputs(&shifted, "json");
    let mut read = strs(&shifted_files);
    read.extend(["--align", "none"]);
    let (report, _) = tracestat_json(dir.path(), &read, "r.json");
    assert!(
        report["collectives_consistent"].as_u64().unwrap()
            < report["collectives"].as_array().unwrap().len() as u64
    );
    // tracestat lines them up again from the collectives' ends: the offsets
    // it finds are the planted ones, against rank 0's (docs/tracestat.md#clock-alignment).
    let (report, _) = tracestat_json(dir.path(), &strs(&inputs(&shifted, "json")), "a.json");
    let a = &report["clock_alignment"];
    assert_eq!(a["status"], "applied", "{a}");
    let found: Vec<f64> = a["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o[1].as_f64().unwrap())
        .collect();
    let planted: Vec<f64> = offsets.iter().map(|o| o - offsets[0]).collect();
    assert_eq!(found, planted);
    assert_eq!(
        report["collectives_consistent"].as_u64().unwrap(),
        report["collectives"].as_array().unwrap().len() as u64
    );
}

#[test]
fn sizes_and_event_counts_are_met() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), "e", &["--ranks", "2", "--events", "5000"]);
    for f in files(&t, "json") {
        let v: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        let n = v["traceEvents"].as_array().unwrap().len() as f64;
        assert!((n / 5000.0 - 1.0).abs() < 0.05, "{n} events");
    }
    let t = trace(
        dir.path(),
        "b",
        &["--ranks", "2", "--size", "3MB", "--format", "both"],
    );
    for f in files(&t, "json") {
        let n = std::fs::metadata(&f).unwrap().len() as f64;
        assert!((n / 3e6 - 1.0).abs() < 0.05, "{n} bytes");
    }
    let small = trace(dir.path(), "small", &["--ranks", "300", "--events", "40"]);
    assert_eq!(files(&small, "json").len(), 300);
}

#[test]
fn mergetrace_merges_generated_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(
        dir.path(),
        "t",
        &["--ranks", "3", "--events", "1000", "--steps", "2"],
    );
    let inputs = files(&t, "json");
    let merged = dir.path().join("all.json");
    let mut cmd = tool("mergetrace");
    cmd.arg("-o").arg(&merged).args(&inputs);
    run_clean(&mut cmd, &[]);
    let total: usize = inputs
        .iter()
        .map(|f| {
            serde_json::from_slice::<Value>(&std::fs::read(f).unwrap()).unwrap()["traceEvents"]
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    let v: Value = serde_json::from_slice(&std::fs::read(&merged).unwrap()).unwrap();
    assert_eq!(v["traceEvents"].as_array().unwrap().len(), total);
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("t");
    for (args, code, want) in [
        (vec!["--ranks", "2", "--cut", "5"], 1, "--cut names rank 5"),
        (vec!["--ranks", "2", "--straggler", "3"], 1, "--straggler 3"),
        (vec!["--ranks", "0"], 1, "--ranks must be at least 1"),
        (vec!["--size", "12 parsecs"], 2, "unknown unit"),
        (vec!["--cut", "1:later"], 1, "unknown cut mode"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_unitrace-gen"))
            .arg("trace")
            .arg(&out_dir)
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        if code == 1 {
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(stderr.starts_with("unitrace-gen: "));
        }
    }
}

/// `--slow-step 1:3` (docs/unitrace-gen.md#trace): rank 1's compute in
/// step 3 takes 3x as long. Every rank leaves each step's collectives
/// together, so every rank's step 3 is the longest and an outlier
/// (docs/tracestat.md#steps), and rank 1 is step 3's busiest rank (the one
/// the others waited for). Without step ranges tracestat finds the same
/// steps from the period of the GPU work.
#[test]
fn tracestat_finds_the_planted_slow_step() {
    let dir = tempfile::tempdir().unwrap();
    let common = [
        "--ranks",
        "3",
        "--events",
        "6000",
        "--straggler",
        "none",
        "--slow-step",
        "1:3",
        "--seed",
        "3",
    ];
    let mut with_steps = common.to_vec();
    with_steps.extend(["--steps", "5"]);
    let t = trace(dir.path(), "marked", &with_steps);
    let (report, _) = tracestat_json(dir.path(), &strs(&inputs(&t, "json")), "m.json");
    let ranks = report["step_ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 3);
    for r in ranks {
        assert_eq!(r["rule"], "marker", "{r}");
        assert_eq!(r["steps"], 5, "{r}");
        assert_eq!(r["max_step"], 3, "{r}");
        assert!(r["outliers"].as_array().unwrap().contains(&3.into()), "{r}");
    }
    let spread = &report["step_spread"].as_array().unwrap()[3];
    assert_eq!(spread["step"], 3);
    assert_eq!(spread["busiest_rank"], "1", "{spread}");
    // Rank 1's compute in step 3 is about 3x its compute in step 2.
    let compute = |rank: &str, step: u64| {
        report["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["rank"] == rank && s["step"] == step)
            .unwrap()["compute_us"]
            .as_f64()
            .unwrap()
    };
    let ratio = compute("1", 3) / compute("1", 2);
    assert!(
        (2.5..3.5).contains(&ratio),
        "slow step compute ratio {ratio}"
    );
    assert!((0.8..1.25).contains(&(compute("0", 3) / compute("0", 2))));

    // The same job without step ranges (more, shorter steps: the layers
    // per step are not fixed then): as many steps by the GPU period,
    // numbered alike, step 3 an outlier whose busiest rank is rank 1.
    let t = trace(dir.path(), "bare", &common);
    let (bare, _) = tracestat_json(dir.path(), &strs(&inputs(&t, "json")), "b.json");
    // Per step two all-reduces, after one barrier.
    let steps = (bare["collectives"].as_array().unwrap().len() as u64 - 1) / 2;
    for r in bare["step_ranks"].as_array().unwrap() {
        assert_eq!(r["rule"], "gpu-period", "{r}");
        assert_eq!(r["steps_found"], steps, "{r}");
        assert!(r["outliers"].as_array().unwrap().contains(&3.into()), "{r}");
    }
    let spread = &bare["step_spread"].as_array().unwrap()[3];
    assert_eq!(spread["step"], 3);
    assert_eq!(spread["busiest_rank"], "1", "{spread}");
}
