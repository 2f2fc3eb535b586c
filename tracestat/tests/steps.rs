//! Steps (docs/tracestat.md#steps): hand-built ranks where every number of
//! the step tables is worked out below, the three rules, `--steps`,
//! `--skip-warmup` and the restriction of the other analyses, partial +
//! combine, and the planted slow step of the Kineto recordings.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::*;

/// How a hand-built rank marks its steps.
#[derive(Clone, Copy, PartialEq)]
enum Marker {
    /// `PyTorch::ProfilerStep#<id>` ranges (unitrace's ITT form).
    ProfilerStep,
    /// A repeated `PyTorch::train_iteration` range, no step id.
    Range,
    /// No step range at all.
    None,
    /// Top-level ranges `PyTorch::forward`, `PyTorch::backward`,
    /// `PyTorch::optimizer` in turn: 40%, 50% and 10% of the step.
    Phases,
    /// `Phases` after a set-up range, `PyTorch::load_model` 3,000 us
    /// before the first step, 400 us long, then idle until the loop.
    PhasesAfterSetup,
}

/// One rank of steps of `(length, compute)` us, back to back from 0 (us
/// after the epoch base). In each step starting at S (ids from 0): three
/// launch calls at S+2, S+4, S+6 (1 us each), then on the compute engine
/// `gemm` [S+10, S+10+compute) and `allreduce_kernel` for the 20 us after
/// it, on the copy engine a copy [S+L-20, S+L-10). So a step has compute
/// = its compute, communication 20, memory 10, idle L - compute - 30, and
/// 3 kernels and 3 launches.
fn rank_trace(rank: u32, steps: &[(u64, u64)], marker: Marker) -> String {
    let base = 1_700_000_000_000_000u64;
    let host = 1000 + rank;
    let dev = 4294967295u64 - (rank as u64) * 32;
    let (compute, copy) = (dev, dev - 1);
    let mut ev = String::new();
    let mut push = |line: String| {
        if !ev.is_empty() {
            ev.push_str(",\n");
        }
        ev.push_str(&line);
    };
    push(format!(
        r#"{{"ph": "M", "name": "process_name", "pid": {host}, "ts": {base}, "args": {{"name": "RANK {rank} HOST<node0>"}}}}"#
    ));
    push(format!(
        r#"{{"ph": "M", "name": "process_name", "pid": {dev}, "ts": {base}, "args": {{"name": "RANK {rank} DEVICE<node0>[GPU] 0:0:0:0 #0"}}}}"#
    ));
    push(format!(
        r#"{{"ph": "M", "name": "thread_name", "pid": {dev}, "tid": {compute}, "ts": {base}, "args": {{"name": "Thread {host} L0 Compute Engine<0,0>"}}}}"#
    ));
    push(format!(
        r#"{{"ph": "M", "name": "thread_name", "pid": {dev}, "tid": {copy}, "ts": {base}, "args": {{"name": "Thread {host} L0 Copy Engine<1,0>"}}}}"#
    ));
    if marker == Marker::PhasesAfterSetup {
        push(format!(
            r#"{{"ph": "X", "tid": {host}, "pid": {host}, "name": "PyTorch::load_model", "cat": "cpu_op", "ts": {}, "dur": 400}}"#,
            base - 3000
        ));
    }
    let mut s = 0u64;
    let mut id = 0u64;
    for (i, &(len, c)) in steps.iter().enumerate() {
        let name = match marker {
            Marker::ProfilerStep => Some(format!("PyTorch::ProfilerStep#{i}")),
            Marker::Range => Some("PyTorch::train_iteration".to_string()),
            Marker::None | Marker::Phases | Marker::PhasesAfterSetup => None,
        };
        if matches!(marker, Marker::Phases | Marker::PhasesAfterSetup) {
            let (f, b) = (len * 4 / 10, len * 5 / 10);
            for (phase, at, dur) in [
                ("forward", 0, f),
                ("backward", f, b),
                ("optimizer", f + b, len - f - b),
            ] {
                push(format!(
                    r#"{{"ph": "X", "tid": {host}, "pid": {host}, "name": "PyTorch::{phase}", "cat": "cpu_op", "ts": {}, "dur": {dur}}}"#,
                    base + s + at
                ));
            }
        }
        if let Some(name) = name {
            push(format!(
                r#"{{"ph": "X", "tid": {host}, "pid": {host}, "name": "{name}", "cat": "cpu_op", "ts": {}, "dur": {len}}}"#,
                base + s
            ));
        }
        let kernels = [
            ("gemm", compute, s + 10, c),
            ("allreduce_kernel", compute, s + 10 + c, 20),
            (
                "zeCommandListAppendMemoryCopy(M2D)[4096]",
                copy,
                s + len - 20,
                10,
            ),
        ];
        for (k, (kname, tid, start, dur)) in kernels.into_iter().enumerate() {
            id += 1;
            let call = s + 2 + 2 * k as u64;
            push(format!(
                r#"{{"ph": "X", "tid": {host}, "pid": {host}, "name": "zeCommandListAppendLaunchKernel", "cat": "cpu_op", "ts": {}, "dur": 1}}"#,
                base + call
            ));
            push(format!(
                r#"{{"ph": "s", "tid": {host}, "pid": {host}, "name": "dep", "cat": "Flow_H2D_{id}_{rank}", "ts": {}, "id": {id}}}"#,
                base + call
            ));
            push(format!(
                r#"{{"ph": "X", "tid": {tid}, "pid": {dev}, "name": "{kname}", "cat": "gpu_op", "ts": {}, "dur": {dur}, "args": {{"id": "{id}"}}}}"#,
                base + start
            ));
            push(format!(
                r#"{{"ph": "t", "tid": {tid}, "pid": {dev}, "name": "dep", "cat": "Flow_H2D_{id}_{rank}", "ts": {}, "id": {id}}}"#,
                base + start
            ));
        }
        s += len;
    }
    if matches!(marker, Marker::Phases | Marker::PhasesAfterSetup) {
        // A helper thread's own loop, over longer than the steps, calling
        // no runtime: not the steps' thread.
        for k in 0..(s / 50 + 2) {
            let phase = ["DataLoader::fetch", "DataLoader::collate"][k as usize % 2];
            push(format!(
                r#"{{"ph": "X", "tid": {}, "pid": {host}, "name": "{phase}", "cat": "cpu_op", "ts": {}, "dur": 50}}"#,
                host + 500,
                base + k * 50
            ));
        }
    }
    let mut out = String::from("{ \"traceEvents\":[\n");
    out.push_str(&ev);
    let _ = write!(out, "\n]\n}}\n");
    out
}

/// Writes ranks (each a list of steps) into `dir`, one file per rank.
fn write_ranks(dir: &Path, ranks: &[Vec<(u64, u64)>], marker: Marker) -> Vec<PathBuf> {
    ranks
        .iter()
        .enumerate()
        .map(|(r, steps)| {
            let p = dir.join(format!("steps.{}.{r}.json", 1000 + r));
            std::fs::write(&p, rank_trace(r as u32, steps, marker)).unwrap();
            p
        })
        .collect()
}

const EVEN: (u64, u64) = (100, 40);
const SLOW: (u64, u64) = (200, 140);

/// Rank 1's steps found by the sequence of `Marker::Phases` ranges: its
/// four steps of 100, 100, 200 and 100 us from `origin`.
fn assert_phase_steps(doc: &Value, origin: f64) {
    let r1 = row(doc, "step_ranks", "rank", "1");
    assert_eq!(r1["rule"], "top-level-sequence");
    assert_eq!(
        r1["source"],
        "PyTorch::forward, PyTorch::backward, PyTorch::optimizer"
    );
    assert_eq!(r1["steps_found"], 4);
    for (step, start, dur) in [
        (0, 0.0, 100.0),
        (1, 100.0, 100.0),
        (2, 200.0, 200.0),
        (3, 400.0, 100.0),
    ] {
        close(
            f(&step_row(doc, "1", step)["start_us"]) - origin,
            start,
            "start",
        );
        close(f(&step_row(doc, "1", step)["dur_us"]), dur, "dur");
    }
}

/// 2 ranks x 4 steps of 100 us, rank 1's step 2 takes 200 us (140 us of
/// compute).
fn two_ranks(dir: &Path, marker: Marker) -> Vec<PathBuf> {
    write_ranks(dir, &[vec![EVEN; 4], vec![EVEN, EVEN, SLOW, EVEN]], marker)
}

fn step_row<'a>(doc: &'a Value, rank: &str, step: u64) -> &'a Value {
    doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["rank"] == rank && r["step"] == step)
        .unwrap_or_else(|| panic!("no step {step} of rank {rank}"))
}

fn spread_row(doc: &Value, step: u64) -> &Value {
    doc["step_spread"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["step"] == step)
        .unwrap_or_else(|| panic!("no spread row of step {step}"))
}

fn ids(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// Every number of the three step tables on the 2 x 4 ranks.
#[test]
fn every_number_of_the_step_tables_on_two_hand_built_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let files = two_ranks(dir.path(), Marker::ProfilerStep);
    let (doc, stdout, stderr) = report(&files, &[]);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(doc["steps"].as_array().unwrap().len(), 8);
    // Starts: rank 0 at 0, 100, 200, 300; rank 1 at 0, 100, 200, 400 (the
    // origin is the first event of either rank, 0).
    let starts = [[0.0, 100.0, 200.0, 300.0], [0.0, 100.0, 200.0, 400.0]];
    for (rank, label) in ["0", "1"].iter().enumerate() {
        for step in 0..4u64 {
            let r = step_row(&doc, label, step);
            let slow = rank == 1 && step == 2;
            close(f(&r["start_us"]), starts[rank][step as usize], "start");
            close(f(&r["dur_us"]), if slow { 200.0 } else { 100.0 }, "dur");
            close(
                f(&r["compute_us"]),
                if slow { 140.0 } else { 40.0 },
                "compute",
            );
            close(f(&r["communication_us"]), 20.0, "communication");
            close(f(&r["memory_us"]), 10.0, "memory");
            // 100 - 40 - 30 and 200 - 140 - 30.
            close(f(&r["idle_us"]), 30.0, "idle");
            assert_eq!(r["kernels"], 3);
            assert_eq!(r["launches"], 3);
            // Every operation is launched and runs in its step: compute
            // and memory, 40 + 10 and 140 + 10.
            close(
                f(&r["launched_us"]),
                if slow { 150.0 } else { 50.0 },
                "launched",
            );
            // Against the rank's median (100 us on both ranks).
            close(
                f(&r["vs_median_pct"]),
                if slow { 100.0 } else { 0.0 },
                "vs median",
            );
            assert_eq!(r["outlier"], slow, "{r}");
        }
    }
    let ranks = doc["step_ranks"].as_array().unwrap();
    let (r0, r1) = (&ranks[0], &ranks[1]);
    for r in [r0, r1] {
        assert_eq!(r["rule"], "marker");
        assert_eq!(r["source"], r"ProfilerStep#(\d+)");
        assert_eq!(r["steps_found"], 4);
        assert_eq!(r["steps"], 4);
        close(f(&r["median_us"]), 100.0, "median");
    }
    close(f(&r0["p90_us"]), 100.0, "p90");
    close(f(&r0["mean_us"]), 100.0, "mean");
    close(f(&r0["max_us"]), 100.0, "max");
    // Equal steps: the first is the longest.
    assert_eq!(r0["max_step"], 0);
    assert!(ids(&r0["outliers"]).is_empty());
    // [100, 100, 100, 200]: p90 at 2.7 of 3 positions = 100 + 0.7 x 100.
    close(f(&r1["p90_us"]), 170.0, "p90");
    close(f(&r1["mean_us"]), 125.0, "mean");
    close(f(&r1["max_us"]), 200.0, "max");
    assert_eq!(r1["max_step"], 2);
    // Deviations [0, 0, 100, 0]: MAD 0, so the limit is 10% of 100 us.
    assert_eq!(ids(&r1["outliers"]), vec![2]);
    for step in [0, 1, 3] {
        let s = spread_row(&doc, step);
        assert_eq!(s["ranks"], 2);
        close(f(&s["min_us"]), 100.0, "min");
        close(f(&s["max_us"]), 100.0, "max");
        close(f(&s["spread_us"]), 0.0, "spread");
        close(f(&s["max_over_median"]), 1.0, "max/median");
        // Ties go to the first rank.
        assert_eq!(s["slowest_rank"], "0");
        assert_eq!(s["busiest_rank"], "0");
        close(f(&s["busiest_us"]), 50.0, "own time");
    }
    let s = spread_row(&doc, 2);
    close(f(&s["min_us"]), 100.0, "min");
    close(f(&s["median_us"]), 150.0, "median");
    close(f(&s["max_us"]), 200.0, "max");
    close(f(&s["spread_us"]), 100.0, "spread");
    close(f(&s["max_over_median"]), 200.0 / 150.0, "max/median");
    assert_eq!(s["slowest_rank"], "1");
    assert_eq!(s["busiest_rank"], "1");
    close(f(&s["busiest_us"]), 150.0, "own time");
    // The job's step time: per step the slowest rank, [100, 100, 200, 100].
    let t = &doc["step_time"];
    assert_eq!(t["steps"], 4);
    close(f(&t["median_us"]), 100.0, "job median");
    close(f(&t["p90_us"]), 170.0, "job p90");
    close(f(&t["max_us"]), 200.0, "job max");
    assert_eq!(t["max_step"], 2);
    assert_eq!(doc["steps_selected"], false);
    // The console: the rule, the job line and the one outlier step.
    assert!(
        stdout.contains("rank 0-1: steps by host ranges matching `ProfilerStep#(\\d+)`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("step time (the slowest rank's, over 4 steps): median 0.100 ms"),
        "{stdout}"
    );
    let outliers = stdout.split("Outlier steps").nth(1).unwrap();
    assert_eq!(
        outliers.lines().filter(|l| l.starts_with("  1 ")).count(),
        1,
        "{outliers}"
    );
}

/// `--steps 1-2`: the step tables hold steps 1 and 2, and every other
/// analysis sees each rank from its step 1's start to its step 2's end.
#[test]
fn steps_restrict_the_tables_and_every_other_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let files = two_ranks(dir.path(), Marker::ProfilerStep);
    let (doc, stdout, _) = report(&files, &["--steps", "1-2"]);
    let kept: Vec<(String, u64)> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["rank"].as_str().unwrap().to_string(),
                r["step"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kept,
        [("0", 1), ("0", 2), ("1", 1), ("1", 2)].map(|(r, s)| (r.to_string(), s))
    );
    assert_eq!(doc["step_ranks"][0]["steps_found"], 4);
    assert_eq!(doc["steps_selected"], true);
    assert!(stdout.contains("Every other table holds only the kept steps"));
    // Breakdown: rank 0 100-300 us, two steps of 40 + 20 + 10 us busy;
    // rank 1 100-400 us, 40 + 140 us of compute.
    let b0 = row(&doc, "breakdown", "rank", "0");
    close(f(&b0["wall_us"]), 200.0, "wall");
    close(f(&b0["busy_us"]), 140.0, "busy");
    close(f(&b0["compute_us"]), 80.0, "compute");
    assert_eq!(b0["launches"], 6);
    let b1 = row(&doc, "breakdown", "rank", "1");
    close(f(&b1["wall_us"]), 300.0, "wall");
    close(f(&b1["compute_us"]), 180.0, "compute");
    close(f(&b1["communication_us"]), 40.0, "communication");
    close(f(&b1["memory_us"]), 20.0, "memory");
    // Kernels: 2 gemm per rank.
    let gemm = row(&doc, "kernels", "name", "gemm");
    assert_eq!(gemm["count"], 4);
    close(
        f(&gemm["total_us"]),
        40.0 + 40.0 + 40.0 + 140.0,
        "gemm total",
    );
    // A list with holes keeps the span between (step 2 of 1 and 3).
    let (doc, _, _) = report(&files, &["--steps", "1,3"]);
    assert_eq!(doc["steps"].as_array().unwrap().len(), 4);
    close(
        f(&row(&doc, "breakdown", "rank", "0")["wall_us"]),
        300.0,
        "wall",
    );
    // No kept step: nothing of the rank is left.
    let (doc, _, _) = report(&files, &["--steps", "7-9"]);
    assert!(doc["steps"].as_array().unwrap().is_empty());
    close(
        f(&row(&doc, "breakdown", "rank", "0")["wall_us"]),
        0.0,
        "wall",
    );
    assert!(doc["step_time"].is_null());
}

/// `--skip-warmup` drops the leading steps more than 20% off the median
/// of the steps after them.
#[test]
fn skip_warmup_drops_the_steps_before_the_step_time_settles() {
    let dir = tempfile::tempdir().unwrap();
    // 300 is off the median of the rest (100) by 200%, 150 by 50%; 110 is
    // within 20% of 100: the warm-up is steps 0 and 1.
    let steps = vec![(300, 40), (150, 40), (110, 40), EVEN, EVEN, EVEN];
    let files = write_ranks(dir.path(), &[steps], Marker::ProfilerStep);
    let (all, _, _) = report(&files, &[]);
    assert_eq!(ids(&all["step_ranks"][0]["outliers"]), vec![0, 1]);
    let (doc, stdout, _) = report(&files, &["--skip-warmup"]);
    let r = &doc["step_ranks"][0];
    assert_eq!(ids(&r["warmup"]), vec![0, 1]);
    assert_eq!(r["steps"], 4);
    assert_eq!(r["steps_found"], 6);
    assert!(
        stdout.contains("--skip-warmup dropped rank 0: 0 1"),
        "{stdout}"
    );
    // The other analyses start at step 2 (450 us) and end with step 5.
    let b = row(&doc, "breakdown", "rank", "0");
    close(f(&b["wall_us"]), 410.0, "wall");
    close(f(&b["compute_us"]), 160.0, "compute");
    // --steps first, then the warm-up of what is left: from step 1 on,
    // 150 is off the median of [110, 100, 100, 100] by 43%, 110 is not.
    let (doc, _, _) = report(&files, &["--steps", "1-5", "--skip-warmup"]);
    assert_eq!(ids(&doc["step_ranks"][0]["warmup"]), vec![1]);
}

/// A rank without steps has no warm-up to drop: `--skip-warmup` leaves it
/// whole (every table as without it); `--steps` asks for ids it does not
/// have, so it keeps nothing, and the console says so.
#[test]
fn skip_warmup_leaves_a_rank_without_steps_whole() {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/tracestat/gen");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&gen)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let (whole, _, _) = report(&files, &[]);
    assert_eq!(whole["step_ranks"][0]["rule"], "none");
    let busy = f(&row(&whole, "breakdown", "rank", "0")["busy_us"]);
    assert!(busy > 1000.0, "{busy}");
    let (skipped, stdout, _) = report(&files, &["--skip-warmup"]);
    for table in ["breakdown", "gaps", "launches", "kernels", "collectives"] {
        assert_eq!(skipped[table], whole[table], "{table}");
    }
    assert!(!stdout.contains("Every other table holds only"), "{stdout}");
    let (none, stdout, _) = report(&files, &["--steps", "1-3"]);
    close(
        f(&row(&none, "breakdown", "rank", "0")["busy_us"]),
        0.0,
        "busy",
    );
    assert!(
        stdout.contains("No rank kept a step: every other table is empty"),
        "{stdout}"
    );
}

/// Without markers: a repeated top-level range, else the GPU period.
#[test]
fn steps_without_markers_by_a_repeated_range_or_the_gpu_period() {
    let dir = tempfile::tempdir().unwrap();
    let range_dir = dir.path().join("range");
    std::fs::create_dir(&range_dir).unwrap();
    let files = two_ranks(&range_dir, Marker::Range);
    let (doc, stdout, _) = report(&files, &[]);
    let r1 = row(&doc, "step_ranks", "rank", "1");
    assert_eq!(r1["rule"], "top-level-range");
    assert_eq!(r1["source"], "PyTorch::train_iteration");
    assert_eq!(r1["steps_found"], 4);
    // The same windows as the markers, numbered from 0.
    close(f(&step_row(&doc, "1", 2)["dur_us"]), 200.0, "slow step");
    close(f(&step_row(&doc, "1", 3)["start_us"]), 400.0, "start");
    assert!(stdout.contains("steps by the repeated top-level range `PyTorch::train_iteration`"));
    // Ranges of a step's phases in turn, none a step alone (forward covers
    // 40% of its stretch): the sequence is the step, from each forward to
    // the end of its optimizer range.
    let phases_dir = dir.path().join("phases");
    std::fs::create_dir(&phases_dir).unwrap();
    let phases = two_ranks(&phases_dir, Marker::Phases);
    let (doc, stdout, _) = report(&phases, &[]);
    assert_phase_steps(&doc, 0.0);
    assert!(
        stdout.contains("the repeated sequence of top-level ranges `PyTorch::forward, PyTorch::backward, PyTorch::optimizer`"),
        "{stdout}"
    );
    // The same loop after a set-up range and 2,600 us of idle time: the
    // thread's ranges cover a fifth of its span, the loop's all of its
    // own; the steps are the loop's, from its first forward range, with
    // the set-up range in none of them.
    let setup_dir = dir.path().join("setup");
    std::fs::create_dir(&setup_dir).unwrap();
    let (doc, _, _) = report(&two_ranks(&setup_dir, Marker::PhasesAfterSetup), &[]);
    assert_phase_steps(&doc, f(&step_row(&doc, "1", 0)["start_us"]));
    // --step that matches nothing falls through to the rules after it.
    let (doc, _, _) = report(&files, &["--step", "nothing-like-this"]);
    assert_eq!(
        row(&doc, "step_ranks", "rank", "1")["rule"],
        "top-level-range"
    );

    let gpu_dir = dir.path().join("gpu");
    std::fs::create_dir(&gpu_dir).unwrap();
    let files = two_ranks(&gpu_dir, Marker::None);
    let (doc, stdout, _) = report(&files, &[]);
    // The compute engine runs gemm, allreduce_kernel, gemm, ...: period 2;
    // a step starts at each gemm (40 us idle before it, none before the
    // all-reduce) and ends at the next; the last ends with its all-reduce.
    let r1 = row(&doc, "step_ranks", "rank", "1");
    assert_eq!(r1["rule"], "gpu-period");
    assert_eq!(r1["steps_found"], 4);
    // (Times since the first event, the launch call at 2 us.)
    for (step, start, dur) in [
        (0, 8.0, 100.0),
        (1, 108.0, 100.0),
        (2, 208.0, 200.0),
        (3, 408.0, 60.0),
    ] {
        let s = step_row(&doc, "1", step);
        close(f(&s["start_us"]), start, "start");
        close(f(&s["dur_us"]), dur, "dur");
    }
    // [100, 100, 200, 60]: MAD 20, limit 3 x 1.4826 x 20 = 88.9 us.
    assert_eq!(ids(&r1["outliers"]), vec![2]);
    assert!(
        stdout.contains("steps by the period of the GPU work, every 2 operations"),
        "{stdout}"
    );

    // Three steps or fewer of nothing repeating: no steps.
    let one = dir.path().join("one");
    std::fs::create_dir(&one).unwrap();
    let files = write_ranks(&one, &[vec![EVEN, SLOW]], Marker::None);
    let (doc, stdout, _) = report(&files, &[]);
    assert_eq!(doc["step_ranks"][0]["rule"], "none");
    assert!(doc["step_time"].is_null());
    assert!(stdout.contains("rank 0: no steps"), "{stdout}");
    assert!(!stdout.contains("Outlier steps"), "{stdout}");
}

/// Partials carry the steps: partial + combine equals one run, with
/// `--steps` and `--skip-warmup` chosen when the partials are made.
#[test]
fn partial_and_combine_carry_the_steps() {
    let dir = tempfile::tempdir().unwrap();
    let files = two_ranks(dir.path(), Marker::ProfilerStep);
    for extra in [vec![], vec!["--steps", "1-3", "--skip-warmup"]] {
        let (whole, _, _) = report(&files, &extra);
        let parts = crate::common::partial_per_file(&files, dir.path(), &extra);
        let json = dir.path().join("c.json");
        let mut args: Vec<&OsStr> = vec!["--combine".as_ref()];
        args.extend(parts.iter().map(|p| p.as_os_str()));
        args.extend(["--json".as_ref(), json.as_os_str(), "-q".as_ref()]);
        let o = run(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let combined: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert_eq!(
            combined, whole,
            "partial + combine differs from one run ({extra:?})"
        );
        // Step options belong to the partials.
        args.push("--skip-warmup".as_ref());
        let o = run(&args);
        assert!(!o.status.success());
        assert!(String::from_utf8_lossy(&o.stderr).contains("chosen when the partials are made"));
    }
    // A partial of version 4 (before steps) still combines; its ranks.
    // steps read as not recorded.
    let p = dir.path().join("p0.json");
    let mut old: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    old["version"] = 4.into();
    old["options"].as_object_mut().unwrap().remove("steps");
    for r in old["ranks"].as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("steps");
    }
    std::fs::write(&p, serde_json::to_vec(&old).unwrap()).unwrap();
    let json = dir.path().join("old.json");
    let o = run(&[
        "--combine".as_ref(),
        p.as_os_str(),
        "--json".as_ref(),
        json.as_os_str(),
        "-q".as_ref(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["step_ranks"][0]["rule"], "not-recorded");
    assert!(doc["breakdown"][0]["busy_us"].as_f64().unwrap() > 0.0);
}

/// Bad step options: one line, usage-like errors.
#[test]
fn bad_step_options_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let files = two_ranks(dir.path(), Marker::ProfilerStep);
    for (args, says) in [
        (
            vec!["--step", "ProfilerStep#(\\d+"],
            "--step \"ProfilerStep#(\\\\d+\": not a regular expression",
        ),
        (vec!["--steps", "5-3"], "--steps: '5-3' is an empty range"),
        (
            vec!["--steps", "x"],
            "--steps: 'x' is not a step or a range a-b",
        ),
    ] {
        let mut a: Vec<&OsStr> = files.iter().map(|p| p.as_os_str()).collect();
        a.extend(args.iter().map(OsStr::new));
        let o = run(&a);
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("tracestat: ") && err.contains(says),
            "{err}"
        );
    }
}

/// The CSV and Parquet files of the step tables.
#[test]
fn step_tables_as_csv_and_parquet() {
    let dir = tempfile::tempdir().unwrap();
    let files = two_ranks(dir.path(), Marker::ProfilerStep);
    let (csv, pq) = (dir.path().join("csv"), dir.path().join("pq"));
    let mut args: Vec<&OsStr> = files.iter().map(|p| p.as_os_str()).collect();
    args.extend([
        "-q".as_ref(),
        "--csv".as_ref(),
        csv.as_os_str(),
        "--parquet".as_ref(),
        pq.as_os_str(),
    ]);
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(csv.join("steps.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "rank,step,start_us,dur_us,compute_us,communication_us,memory_us,idle_us,kernels,launches,launched_us,vs_median_pct,outlier"
    );
    assert!(
        text.contains(
            "\n1,2,200.000,200.000,140.000,20.000,10.000,30.000,3,3,150.000,100.0000,true\n"
        ),
        "{text}"
    );
    for name in ["steps", "step_ranks", "step_spread"] {
        let csv_bytes = std::fs::read(csv.join(format!("{name}.csv"))).unwrap();
        let parquet = std::fs::read(pq.join(format!("{name}.parquet"))).unwrap();
        unitrace_render::table::same_as_csv(&csv_bytes, parquet).unwrap();
    }
}

fn recorded(which: &str) -> Vec<PathBuf> {
    (0..4)
        .map(|r| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../testdata/kineto/recorded")
                .join(which)
                .join(format!("rank{r}.pt.trace.json.gz"))
        })
        .collect()
}

/// Our Kineto recordings (testdata/kineto/recorded/README.md): steps
/// `ProfilerStep#2` to `#6` on every rank; in `planted/`, rank 1 sleeps
/// 50 ms in step 3: its longest step and an outlier, and step 3's slowest
/// rank. The clean run's only outlier is rank 3's first step (9.1 ms
/// against a median of 6.7 ms), which `--skip-warmup` drops.
#[test]
fn kineto_recordings_show_the_planted_slow_step() {
    let (clean, _, _) = report(&recorded("clean"), &[]);
    for r in clean["step_ranks"].as_array().unwrap() {
        assert_eq!(r["rule"], "marker");
        assert_eq!(r["steps"], 5);
        let expected: Vec<u64> = if r["rank"] == "3" { vec![2] } else { vec![] };
        assert_eq!(ids(&r["outliers"]), expected, "{r}");
    }
    let (settled, _, _) = report(&recorded("clean"), &["--skip-warmup"]);
    for r in settled["step_ranks"].as_array().unwrap() {
        assert!(ids(&r["outliers"]).is_empty(), "{r}");
    }
    assert_eq!(
        ids(&row(&settled, "step_ranks", "rank", "3")["warmup"]),
        vec![2]
    );
    let steps: Vec<u64> = clean["step_spread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["step"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, vec![2, 3, 4, 5, 6]);
    let (planted, _, _) = report(&recorded("planted"), &[]);
    let r1 = row(&planted, "step_ranks", "rank", "1");
    assert_eq!(r1["max_step"], 3);
    assert!(ids(&r1["outliers"]).contains(&3), "{r1}");
    // The sleep is 50.38 ms on the host: the step lasts over 50 ms more
    // than the rank's median.
    assert!(f(&r1["max_us"]) - f(&r1["median_us"]) > 50_000.0, "{r1}");
    let s3 = spread_row(&planted, 3);
    assert_eq!(s3["slowest_rank"], "1");
    assert_eq!(s3["ranks"], 4);
    assert_eq!(planted["step_time"]["max_step"], 3);
    // The 21.5 ms matmul put into rank 2's step 5 runs after the host left
    // the step (in step 6's window), and is step 5's by its launch: rank 2
    // is step 5's busiest, though rank 3's pageable copies give it more
    // device time inside step 5's window.
    let s5 = spread_row(&planted, 5);
    assert_eq!(s5["busiest_rank"], "2", "{s5}");
    assert!(f(&s5["busiest_us"]) > 21_000.0, "{s5}");
    let r2 = |step| step_row(&planted, "2", step);
    assert!(f(&r2(5)["compute_us"]) < 21_000.0, "{}", r2(5));
    assert!(f(&r2(6)["compute_us"]) > 21_000.0, "{}", r2(6));
    assert!(f(&r2(6)["launched_us"]) < 21_000.0, "{}", r2(6));
    // Each step's device work adds up: its parts are no longer than it.
    for s in planted["steps"].as_array().unwrap() {
        let parts =
            f(&s["compute_us"]) + f(&s["communication_us"]) + f(&s["memory_us"]) + f(&s["idle_us"]);
        close(parts, f(&s["dur_us"]), "parts of a step");
    }
}

/// `--skip-warmup` on the 5 steps a profiler schedule records, one of them
/// slow (testdata/kineto/recorded/rerun: rank 1's planted matmuls in step
/// 4 hold up step 5 on both ranks): it drops at most a rank's long first
/// step, never the slow step nor the steps before it. Rank 0 of `slow1`
/// ran 12.1, 7.1, 7.3, 31.9 and 9.4 ms; against the median of the steps
/// after each leading one, or of all five (9.4), every step but the last
/// was more than 20% off, and the slow step was dropped as warm-up.
#[test]
fn skip_warmup_keeps_a_slow_step_of_a_short_run() {
    let rerun = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded/rerun");
    for run in ["slow2", "slow1", "slow1again", "slow0"] {
        let (doc, _, _) = report(&[rerun.join(run)], &["--skip-warmup"]);
        for r in doc["step_ranks"].as_array().unwrap() {
            let warmup = ids(&r["warmup"]);
            assert!(warmup.is_empty() || warmup == [2], "{run}: {r}");
        }
        if run != "slow0" {
            assert_eq!(doc["step_time"]["max_step"], 5, "{run}");
        }
    }
    let (doc, _, _) = report(&[rerun.join("slow1")], &["--skip-warmup"]);
    assert_eq!(
        ids(&row(&doc, "step_ranks", "rank", "0")["warmup"]),
        vec![2]
    );
    // Four problems planted at once: rank 1's steps of 17, 67, 6, 11 and
    // 26 ms never settle, and no rank's steps are dropped (all but the
    // last were, on ranks 0 and 3 before, on rank 1 without the cap of
    // half the steps).
    let (planted, console, _) = report(&recorded("planted"), &["--skip-warmup"]);
    for r in planted["step_ranks"].as_array().unwrap() {
        assert!(ids(&r["warmup"]).is_empty(), "{r}");
        assert_eq!(r["steps"], 5, "{r}");
        // Rank 1's never settled; the others' settled from the first step.
        assert_eq!(r["warmup_settled"], r["rank"] != "1", "{r}");
    }
    // The report says why nothing was dropped, rank by rank.
    assert!(
        console.contains(
            "--skip-warmup dropped nothing on rank 0 2-3 (the step time settled from the first kept step); \
             nothing on rank 1 (the step time never settled: over half the steps more than 20% off it)"
        ),
        "{console}"
    );
    let (_, console, _) = report(&[rerun.join("slow1")], &["--skip-warmup"]);
    assert!(
        console.contains(
            "--skip-warmup dropped rank 0: 2; nothing on rank 1 (the step time settled from the first kept step)"
        ),
        "{console}"
    );
    // Without the option nothing is said of a warm-up.
    let (plain, console, _) = report(&[rerun.join("slow1")], &[]);
    assert!(!console.contains("--skip-warmup"), "{console}");
    assert!(plain["step_ranks"][0]["warmup_settled"].is_null());
}

/// A cold start recorded on 2 GPUs (testdata/kineto/recorded/README.md#a-cold-start):
/// `ProfilerStep#0` holds the set-up (332 and 346 ms), steps 1 and 2 are
/// still off the settled step time (about 5.4 ms) by more than 20% on rank
/// 0 (7.4 and 8.6 ms), step 1 only on rank 1 (7.9 ms; its step 2 is 5.5
/// ms). `--skip-warmup` drops 0 1 2 on rank 0 and 0 1 on rank 1. NCCL's
/// all-reduces run on the device up to 2 ms after the host called them, in
/// the next step: a kept step holds the calls made in it, and calls of a
/// step only some ranks kept are not matched, so the 3 all-reduces of each
/// of the 9 steps both ranks kept (3 to 11) match and line up.
#[test]
fn kept_steps_match_the_collectives_called_in_them_on_every_rank() {
    let cold = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded/cold");
    let (doc, console, _) = report(std::slice::from_ref(&cold), &["--skip-warmup"]);
    assert_eq!(
        ids(&row(&doc, "step_ranks", "rank", "0")["warmup"]),
        vec![0, 1, 2]
    );
    assert_eq!(
        ids(&row(&doc, "step_ranks", "rank", "1")["warmup"]),
        vec![0, 1]
    );
    assert!(
        console.contains("--skip-warmup dropped rank 0: 0 1 2; rank 1: 0 1"),
        "{console}"
    );
    let consistent = |doc: &Value| {
        let all = doc["collectives"].as_array().unwrap();
        let ok = all.iter().filter(|c| c["consistent"] == true).count();
        (ok, all.len())
    };
    assert_eq!(consistent(&doc), (27, 27));
    assert_eq!(doc["collectives_consistent"], 27);
    // The straggler is found from the arrivals, not from compute time.
    let straggler = doc["straggler"]["reason"].as_str().unwrap_or_default();
    assert!(
        straggler.starts_with("arrived last at"),
        "{}",
        doc["straggler"]
    );
    // The same steps kept on both ranks by id: the calls made in them.
    for (steps, n) in [("3-11", 27), ("2-11", 30), ("4-8", 15)] {
        let (doc, _, _) = report(std::slice::from_ref(&cold), &["--steps", steps]);
        assert_eq!(consistent(&doc), (n, n), "--steps {steps}");
    }
    // The 4-rank planted recording, steps 3 to 5: 9 all-reduces, all line
    // up (5 of 9 when a window held the device work that ran in it).
    let (planted, _, _) = report(&recorded("planted"), &["--steps", "3-5"]);
    assert_eq!(consistent(&planted), (9, 9));
    // Without the option the slowest step, step 0, is named as warm-up.
    let (plain, console, _) = report(std::slice::from_ref(&cold), &[]);
    assert_eq!(
        ids(&row(&plain, "step_ranks", "rank", "0")["warmup_seen"]),
        vec![0, 1, 2]
    );
    assert_eq!(
        ids(&row(&plain, "step_ranks", "rank", "1")["warmup_seen"]),
        vec![0, 1]
    );
    assert!(
        console.contains("; it looks like warm-up on every rank (--skip-warmup leaves it out)\n"),
        "{console}"
    );
    assert!(!report(&recorded("planted"), &[])
        .1
        .contains("looks like warm-up"));
    // Partials of one rank each combine to the same report.
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..2)
        .map(|r| cold.join(format!("rank{r}.pt.trace.json.gz")))
        .collect();
    let partials = partial_per_file(&files, dir.path(), &["--skip-warmup"]);
    let (combined, _, _) = report(&partials, &["--combine"]);
    for (k, v) in doc.as_object().unwrap() {
        assert_eq!(&combined[k], v, "{k}");
    }
}

/// Recorded without a profiler schedule, so without `ProfilerStep` ranges
/// (testdata/kineto/recorded/README.md#without-step-markers): 10
/// iterations on 2 GPUs, rank 1 running one 21.5 ms matmul more in
/// iteration 4. No host range covers a step. Without Python stacks the
/// main thread's top-level ranges `data_to_device`, `forward`, `backward`,
/// `optimizer` repeat in turn: each iteration is a step, numbered as the
/// loop numbers it, and iteration 4's path is the planted matmul. With
/// Python stacks the top-level ranges are the interpreter's frames, so
/// both ranks' steps come from the period of the GPU work, 55 operations
/// on the compute engine, though rank 1's extra kernel shifts the
/// operations after it by one (before, rank 1 had no steps); the first
/// iteration's start is before the first whole period: iteration 4 is
/// step 3 on both ranks.
#[test]
fn steps_without_markers_are_found_on_every_rank_despite_an_extra_kernel() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded");
    let sequence = "data_to_device, forward, backward, optimizer";
    // (run, rule, source starts, steps, iteration 4's step, the step its
    // host range waits for the matmul in).
    let runs = [
        (
            "nomarkers-nostack",
            "top-level-sequence",
            sequence,
            10,
            4,
            5,
        ),
        (
            "nomarkers-stack",
            "gpu-period",
            "every 55 operations",
            9,
            3,
            3,
        ),
    ];
    for (run, rule, source, steps, planted, longest) in runs {
        let (doc, console, _) = report(&[base.join(run)], &[]);
        for rank in ["0", "1"] {
            let r = row(&doc, "step_ranks", "rank", rank);
            assert_eq!(r["rule"], rule, "{run} rank {rank}");
            assert!(r["source"].as_str().unwrap().starts_with(source), "{r}");
            assert_eq!(r["steps"], steps, "{run} rank {rank}");
            assert_eq!(r["max_step"], longest, "{run} rank {rank}");
        }
        assert_eq!(doc["slowest_step"], planted.to_string(), "{run}");
        assert!(
            console.contains(
                "its longest stretch: rank 1, compute, sm80_xmma_gemm_f32f32_f32f32_f32_nn_n"
            ),
            "{run}: {console}"
        );
        // The extra kernel and the host's wait for it: in rank 1's window
        // with the most kernels (the host range of iteration 5 waits while
        // iteration 4's work runs on the device).
        let extra = doc["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["rank"] == "1")
            .max_by_key(|s| s["kernels"].as_u64())
            .unwrap();
        assert_eq!(extra["step"], longest, "{run}");
    }
}
