//! `--findings` (docs/findings.md): no finding on runs with nothing
//! planted (generated, the clean Kineto recording, a real training trace of
//! HTA's), each rule on a generated run with exactly its problem planted
//! (and not on the same run without it), the numbers of the evidence and
//! savings checked against the other tables of the same report, and the
//! planted Kineto recording's problems on the right ranks, and the one-rank
//! recordings' with the numbers counted from their traces.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::report;

fn kineto(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/kineto")
        .join(dir)
}

/// The findings' 2-rank run (`unitrace_gen::cli::findings_run`), then
/// `extra` (`--straggler none`, `--plant P`).
fn generate(out: &Path, extra: &[&str]) -> PathBuf {
    unitrace_gen::cli::findings_run(out, extra).unwrap();
    out.to_path_buf()
}

fn findings(doc: &Value) -> Vec<Value> {
    doc["findings"].as_array().unwrap().clone()
}

fn rules(doc: &Value) -> Vec<String> {
    findings(doc)
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["rule"].as_str().unwrap(),
                f["rank"].as_str().unwrap()
            )
        })
        .collect()
}

fn f64_of(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

/// The largest finding's share of its wall time: the clean runs'
/// criterion (nothing above 1%), and every finding keeps its columns.
fn check_columns(doc: &Value) {
    for f in findings(doc) {
        for key in ["rule", "rank", "step", "name", "evidence", "fix"] {
            assert!(f[key].is_string(), "{key} of {f}");
        }
        assert_eq!(f["step"], "", "no steps yet: {f}");
        // A replay may find that the problem, as measured, holds no step
        // up (docs/findings.md#savings): 0 then, never less.
        let savings = f64_of(&f, "savings_us");
        match f["savings_by"].as_str() {
            Some("bound") => assert!(savings > 0.0, "{f}"),
            Some("replay") => assert!(savings >= 0.0, "{f}"),
            _ => panic!("savings_by of {f}"),
        }
        // Never more than the run's time.
        let wall = doc["breakdown"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| f64_of(b, "wall_us"))
            .fold(0.0, f64::max);
        assert!(savings <= wall, "{f}: wall {wall}");
        assert!(f64_of(&f, "to_us") >= f64_of(&f, "from_us"), "{f}");
    }
    let s: Vec<f64> = findings(doc)
        .iter()
        .map(|f| f64_of(f, "savings_us"))
        .collect();
    assert!(
        s.windows(2).all(|w| w[0] >= w[1]),
        "ranked by savings: {s:?}"
    );
}

#[test]
fn runs_with_nothing_planted_give_no_finding() {
    let dir = tempfile::tempdir().unwrap();
    let clean = generate(&dir.path().join("clean"), &["--straggler", "none"]);
    // The generator's default 4-rank run (its straggler switched off), the
    // clean Kineto recording, a real 5-step training trace of HTA's.
    let four = dir.path().join("four");
    let four_words = ["trace", four.to_str().unwrap(), "--straggler", "none", "-q"];
    unitrace_gen::cli::run_args(&four_words).unwrap();
    for input in [
        clean,
        four,
        kineto("recorded/clean"),
        kineto("hta/ns_resolution_trace"),
        kineto("hta/triton_example"),
    ] {
        let (doc, stdout, _) = report(std::slice::from_ref(&input), &[]);
        check_columns(&doc);
        assert_eq!(rules(&doc), Vec::<String>::new(), "{}", input.display());
        // The console opens with the findings section, saying there is none.
        let at = stdout.find("Findings: what to fix first").expect(&stdout);
        assert!(at < stdout.find("Where the time went").unwrap());
        assert!(stdout[at..].contains("(none: no rule found a problem"));
        // ... once: no empty table or legend under the line.
        let section = &stdout[at..at + stdout[at..].find("\n\n").unwrap()];
        assert_eq!(section.lines().count(), 2, "{section}");
    }
}

/// Each planted problem gives its rule's finding on every rank (`all`,
/// both ranks), which the same run without it does not; `also` are the
/// rules the planted problem brings about by its cost on the host
/// (docs/findings.md#rules says which).
#[test]
fn each_rule_finds_its_planted_problem() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str]); 9] = [
        ("pageable-copy", &[]),
        ("small-copy", &["launch-bound"]),
        ("sync-wait", &[]),
        ("launch-bound", &[]),
        ("host-bound", &[]),
        ("exposed-communication", &[]),
        ("alloc-churn", &["launch-bound"]),
        ("jit", &["host-bound"]),
        ("serialised-copy", &[]),
    ];
    for (rule, also) in cases {
        let run = generate(
            &dir.path().join(rule),
            &["--straggler", "none", "--plant", rule],
        );
        let (doc, _, _) = report(&[run], &[]);
        check_columns(&doc);
        let found = rules(&doc);
        assert!(found.contains(&format!("{rule} all")), "{rule}: {found:?}");
        for other in &found {
            let id = other.split(' ').next().unwrap();
            assert!(
                id == rule || also.contains(&id),
                "{rule}: also {other}: {found:?}"
            );
        }
        let f = findings(&doc)
            .into_iter()
            .find(|f| f["rule"] == rule)
            .unwrap();
        assert_eq!(f["ranks"], 2, "{f}");
        // The rules a what-if rule expresses are replayed; the replay saves
        // no more than the time measured: for launch-bound the example
        // rank's; for exposed-communication the most any rank has (the
        // replay is the run's, whose path crosses to the rank with more
        // communication than the example rank).
        let replayed = ["launch-bound", "exposed-communication"].contains(&rule);
        let by = if replayed { "replay" } else { "bound" };
        assert_eq!(f["savings_by"], by, "{f}");
        if rule == "launch-bound" {
            assert!(f64_of(&f, "savings_us") <= f64_of(&f, "time_us"), "{f}");
        }
        if rule == "exposed-communication" {
            let most = doc["breakdown"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["exposed_communication_us"].as_f64().unwrap())
                .fold(0.0, f64::max);
            assert!(f64_of(&f, "savings_us") <= most, "{f} most {most}");
            // Every step's communication is on its path: the replay
            // saves most of it.
            assert!(
                f64_of(&f, "savings_us") >= 0.9 * f64_of(&f, "time_us"),
                "{f}"
            );
        }
        check_evidence(rule, &f, &doc);
    }
}

/// The finding's numbers against the tables they come from.
fn check_evidence(rule: &str, f: &Value, doc: &Value) {
    let time = f64_of(f, "time_us");
    let savings = f64_of(f, "savings_us");
    // The example rank is the one with the most savings; `all` findings
    // save the median (here, of two ranks, their mean).
    let copies = |rank: &str| {
        doc["copies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["rank"] == rank)
            .unwrap()
            .clone()
    };
    let example = f["evidence"].as_str().unwrap();
    let rank = example
        .split("e.g. rank ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .unwrap()
        .to_string();
    match rule {
        "pageable-copy" => {
            let c = copies(&rank);
            assert!(close(time, f64_of(&c, "pageable_us"), 1e-9), "{f}");
            // 4 steps, one 4 MiB (M2D) input copy each.
            assert_eq!(c["pageable"], 4);
            assert_eq!(f["count"], 4);
            assert_eq!(f["name"], "zeCommandListAppendMemoryCopy(M2D)");
            let other = if rank == "0" { "1" } else { "0" };
            let mean = (time + f64_of(&copies(other), "pageable_us")) / 2.0;
            assert!(close(savings, mean / 2.0, 1e-6), "half the copy time: {f}");
        }
        "small-copy" => {
            let c = copies(&rank);
            assert!(close(time, f64_of(&c, "small_us"), 1e-9));
            // 8 copies of 4 KiB per layer, and each step's 4-byte loss
            // read back.
            let n = c["small"].as_u64().unwrap();
            assert_eq!((n - 4) % 8, 0, "{c}");
            assert!(n >= 100);
            let bytes = (4096 * (n - 4) + 4 * 4) as f64;
            assert!(
                example.contains(&format!("({} bytes in all", bytes as u64)),
                "{f}"
            );
            // Savings: their time less the bytes at 20 GB/s (bytes / 20e3 us).
            assert!(
                savings < time && savings > time - bytes / 20e3 - time * 0.2,
                "{f}"
            );
        }
        "serialised-copy" => {
            let c = copies(&rank);
            assert!(close(time, f64_of(&c, "on_compute_queue_us"), 1e-9));
            assert_eq!(f["name"], "zeCommandListAppendMemoryCopy(D2D)");
        }
        "sync-wait" | "launch-bound" | "host-bound" => {
            let g = doc["idle_gaps"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["rank"] == rank.as_str() && g["device"] == "all")
                .unwrap()
                .clone();
            // The gaps counted are among the rank's idle gaps.
            assert!(time <= f64_of(&g, "total_us") + 1e-6, "{f} {g}");
            assert!(f["count"].as_u64().unwrap() <= g["count"].as_u64().unwrap());
            if rule == "host-bound" {
                assert_eq!(f["name"], "PyTorch::DataLoader::__next__", "{f}");
                // Four steps, 3 to 3.5 ms each.
                assert!(time > 4.0 * 2_900.0 && time < 4.0 * 3_600.0 + 400.0, "{f}");
            }
        }
        "alloc-churn" | "jit" => {
            let kind = if rule == "jit" {
                "module-build"
            } else {
                "alloc"
            };
            let rows: Vec<Value> = doc["setup_calls"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["rank"] == rank.as_str())
                .cloned()
                .collect();
            let steady: f64 = rows
                .iter()
                .filter(|s| rule == "alloc-churn" || s["kind"] == kind)
                .map(|s| f64_of(s, "steady_us"))
                .sum();
            assert!(close(time, steady, 1e-9), "{f} {rows:?}");
            assert_eq!(rows[0]["steady_state"], "steps");
            // The part with the device idle (docs/findings.md#alloc-churn).
            assert!(savings > 0.0 && savings <= time, "{f}");
            if rule == "jit" {
                // One 2 ms build in each of the 3 steps after the first.
                assert_eq!(f["count"], 3);
                assert!(time > 3.0 * 1_500.0 && time < 3.0 * 2_500.0, "{f}");
            }
        }
        "exposed-communication" => {
            let b = doc["breakdown"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["rank"] == rank.as_str() && b["device"] == "all")
                .unwrap()
                .clone();
            assert!(close(time, f64_of(&b, "exposed_communication_us"), 1e-9));
            // The replay's bound is checked against every rank's time by
            // the caller (the run's replay may exceed this rank's).
            assert!(savings > 0.0);
        }
        _ => unreachable!(),
    }
}

#[test]
fn a_slow_rank_is_the_straggler_and_its_compute_the_imbalance() {
    let dir = tempfile::tempdir().unwrap();
    let run = generate(&dir.path().join("slow"), &["--straggler", "1"]);
    let (doc, _, _) = report(&[run], &[]);
    check_columns(&doc);
    let found = rules(&doc);
    assert!(found.contains(&"straggler 1".to_string()), "{found:?}");
    assert!(found.contains(&"imbalance 1".to_string()), "{found:?}");
    let imbalance = findings(&doc)
        .into_iter()
        .find(|f| f["rule"] == "imbalance")
        .unwrap();
    // The excess of compute time over the other rank, the straggler's 45%.
    let compute: Vec<f64> = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["class"] == "compute")
        .map(|k| f64_of(k, "rank_max_us") - f64_of(k, "rank_min_us"))
        .collect();
    let excess: f64 = compute.iter().sum();
    // The bound is that excess; the replay (rank 1's kernels at the median
    // of the two ranks, their mean) saves some of it, not more.
    assert_eq!(imbalance["savings_by"], "replay");
    let saved = f64_of(&imbalance, "savings_us");
    assert!(
        saved > 0.0 && saved <= excess,
        "{imbalance}: excess {excess}"
    );
    let straggler = findings(&doc)
        .into_iter()
        .find(|f| f["rule"] == "straggler")
        .unwrap();
    // The straggler's savings are its lateness, the time measured.
    assert_eq!(straggler["savings_by"], "bound");
    assert!(
        close(
            f64_of(&straggler, "savings_us"),
            f64_of(&straggler, "time_us"),
            1e-9
        ),
        "{straggler}"
    );
}

#[test]
fn the_planted_kineto_recording_gives_its_problems_on_the_right_ranks() {
    let (doc, _, _) = report(&[kineto("recorded/planted")], &[]);
    check_columns(&doc);
    let found = rules(&doc);
    // testdata/kineto/recorded/README.md: rank 1 sleeps 50 ms before an
    // all-reduce of step 3, rank 2 runs one extra 21.5 ms matmul, rank 3
    // copies from pageable memory.
    for want in [
        "straggler 1",
        "host-bound 1",
        "imbalance 2",
        "pageable-copy 3",
    ] {
        assert!(found.contains(&want.to_string()), "{want}: {found:?}");
    }
    let by = |rule: &str| {
        findings(&doc)
            .into_iter()
            .find(|f| f["rule"] == rule)
            .unwrap()
    };
    // The sleep: the others waited at the all-reduce of step 3 about 50 ms
    // for rank 1 (44.4 ms after the rank before it, the most).
    let s = by("straggler");
    assert!(f64_of(&s, "time_us") > 44_000.0, "{s}");
    // Its savings are that lateness (docs/findings.md#savings: its kernels
    // are not what made it late, the sleep is also `host-bound`'s).
    assert_eq!(s["savings_by"], "bound");
    assert!(
        close(f64_of(&s, "savings_us"), f64_of(&s, "time_us"), 1e-9),
        "{s}"
    );
    assert!(by("host-bound")["evidence"]
        .as_str()
        .unwrap()
        .contains("<built-in function sleep>"));
    // The extra matmul: 21.52 ms of one kernel.
    let i = by("imbalance");
    assert!(
        i["name"]
            .as_str()
            .unwrap()
            .starts_with("sm80_xmma_gemm_f32f32"),
        "{i}"
    );
    assert!(
        i["evidence"].as_str().unwrap().contains("+21.521 ms"),
        "{i}"
    );
    // Replayed at the median rank's pace: part of that matmul's time.
    assert_eq!(i["savings_by"], "replay");
    let saved = f64_of(&i, "savings_us");
    assert!(saved > 5_000.0 && saved <= 21_521.0, "{i}");
    // Pageable: 2 copies per step in 5 steps, savings half their time.
    let p = by("pageable-copy");
    assert_eq!(p["count"], 10);
    assert_eq!(p["name"], "Memcpy HtoD (Pageable -> Device)");
    assert!(close(
        f64_of(&p, "savings_us"),
        f64_of(&p, "time_us") / 2.0,
        1e-6
    ));
}

/// A finding of `rule` in a report, by its JSON row.
fn by_rule(doc: &Value, rule: &str) -> Value {
    findings(doc)
        .into_iter()
        .find(|f| f["rule"] == rule)
        .unwrap_or_else(|| panic!("no {rule}: {:?}", rules(doc)))
}

/// The one-rank recordings (testdata/kineto/recorded/README.md#findings-on-a-recording):
/// the numbers below were counted from the traces by a separate script
/// (the README gives it), not by tracestat.
#[test]
fn one_rank_recordings_give_the_rules_they_plant_with_the_counted_numbers() {
    // 2000 tiny additions per step: launch-bound. The trace has 11 776
    // device operations, 11 650 under 10 us; 11 720 idle gaps under 100 us
    // (164.712 ms), of which the rule leaves out the 16 with a
    // synchronisation in them.
    let (doc, _, _) = report(&[kineto("recorded/one-rank/launch")], &[]);
    check_columns(&doc);
    let l = by_rule(&doc, "launch-bound");
    assert_eq!(l["count"], 11704, "{l}");
    assert!(close(f64_of(&l, "time_us"), 164_691.861, 1e-9), "{l}");
    assert!(f64_of(&l, "time_us") <= 164_712.0);
    let ev = l["evidence"].as_str().unwrap();
    assert!(ev.contains("11650 of 11776 kernels"), "{ev}");
    assert_eq!(l["savings_by"], "replay");
    assert!(f64_of(&l, "savings_us") <= f64_of(&l, "time_us"));
    // torch.cuda.empty_cache() at each step: 40 cudaMalloc and 40 cudaFree
    // from the second step's start to the last step's end, 7.065 ms.
    let a = by_rule(&doc, "alloc-churn");
    assert_eq!(
        (a["count"].clone(), a["name"].clone()),
        (80.into(), "cudaMalloc".into())
    );
    assert!(close(f64_of(&a, "time_us"), 7_064.725, 1e-9), "{a}");
    // 2.578 ms of them with the device busy: the savings are the rest.
    assert!(
        close(f64_of(&a, "savings_us"), 7_064.725 - 2_578.0, 1e-3),
        "{a}"
    );
    // The jiterator build of step 4 is NVRTC, which the CUDA profiler does
    // not trace (only a 31.5 us `Lazy Function Loading` overhead slice):
    // no `jit`, but its 103.9 ms are host time that starves the device.
    let h = by_rule(&doc, "host-bound");
    assert_eq!(h["name"], "planted_jit", "{h}");
    assert!(h["evidence"]
        .as_str()
        .unwrap()
        .contains("in planted_jit 103.934 ms"));
    // 1 540 small copies of 1.38 ms: 0.4% of the 324 ms active window,
    // under small-copy's 2%.
    let found = rules(&doc);
    assert_eq!(found, ["host-bound 0", "launch-bound 0", "alloc-churn 0"]);

    // 400 pinned 4 KiB copies per step and no tiny additions: small-copy.
    // 2 040 copies under 64 KiB of 8 519 680 bytes (2 000 planted of 4 KiB,
    // 40 of 8 KiB), 1.990 ms.
    let (doc, _, _) = report(&[kineto("recorded/one-rank/copies")], &[]);
    check_columns(&doc);
    let c = by_rule(&doc, "small-copy");
    assert_eq!(c["count"], 2040, "{c}");
    assert!(close(f64_of(&c, "time_us"), 1_990.0, 1e-3), "{c}");
    let ev = c["evidence"].as_str().unwrap();
    assert!(ev.contains("(8519680 bytes in all"), "{ev}");
    // Their time less their bytes at 20 GB/s (docs/findings.md#small-copy).
    let bound = f64_of(&c, "time_us") - 8_519_680.0 / 20e9 * 1e6;
    assert!(close(f64_of(&c, "savings_us"), bound, 1e-6), "{c}");
    let a = by_rule(&doc, "alloc-churn");
    assert_eq!(a["count"], 81, "40 cudaMalloc, 41 cudaFree: {a}");
    assert!(close(f64_of(&a, "time_us"), 6_691.0, 1e-3), "{a}");
    // The gaps of 100 us or more, all host work here: 15.213 ms.
    let h = by_rule(&doc, "host-bound");
    assert!(close(f64_of(&h, "time_us"), 15_213.0, 1e-4), "{h}");
}

/// A free waits for the device's work: on the 2-rank recording
/// (testdata/kineto/recorded/README.md#findings-on-a-recording) rank 1
/// empties PyTorch's caching allocator every step while its device sits in
/// an all-reduce for rank 0, late from its 2000 tiny additions per step.
/// Counted by scripts/kineto_counts.py: 80 calls, 171.030 ms, 166.142 ms
/// of it with the device busy.
#[test]
fn a_free_that_waits_for_the_device_saves_only_its_idle_part() {
    let (doc, _, _) = report(&[kineto("recorded/two-rank/rules")], &[]);
    check_columns(&doc);
    let a = by_rule(&doc, "alloc-churn");
    assert_eq!(
        (a["rank"].as_str(), a["count"].as_u64()),
        (Some("1"), Some(80)),
        "{a}"
    );
    assert!(close(f64_of(&a, "time_us"), 171_030.0, 1e-4), "{a}");
    assert!(
        close(f64_of(&a, "savings_us"), 171_030.0 - 166_142.0, 1e-3),
        "{a}"
    );
    let ev = a["evidence"].as_str().unwrap();
    assert!(
        ev.contains("166.142 ms of it while the device was busy"),
        "{ev}"
    );
    // What to fix first is the late rank, not the frees that wait for it.
    let first = &findings(&doc)[0];
    assert_eq!(
        (first["rule"].as_str(), first["rank"].as_str()),
        (Some("straggler"), Some("0"))
    );
    let found = rules(&doc);
    for want in ["straggler 0", "host-bound 0", "alloc-churn 1"] {
        assert!(found.contains(&want.to_string()), "{want}: {found:?}");
    }
}

/// The 2-rank recording with a 4 GB all-reduce after every step and
/// nothing beside it (testdata/kineto/recorded/README.md#findings-on-a-recording):
/// `exposed-communication` on both ranks, first, with the communication
/// time scripts/kineto_counts.py counts (rank 1: 63.348 ms of NCCL
/// kernels, 0.599 ms beside compute, 62.749 ms exposed; rank 0: 85.202 ms
/// exposed), saving by replay more than half the run, as the re-runs
/// without the all-reduce did (115 ms of steps against 31 and 33).
#[test]
fn an_exposed_all_reduce_is_found_with_the_counted_time() {
    let (doc, _, _) = report(&[kineto("recorded/two-rank/exposed")], &[]);
    check_columns(&doc);
    let first = &findings(&doc)[0];
    assert_eq!(first["rule"], "exposed-communication", "{first}");
    assert_eq!(first["rank"], "all");
    let ev = first["evidence"].as_str().unwrap();
    assert!(
        ev.starts_with("on 2 of 2 ranks; e.g. rank 1: 62.749 ms"),
        "{ev}"
    );
    assert_eq!(first["savings_by"], "replay");
    assert!(f64_of(first, "savings_pct") > 40.0, "{first}");
    let exposed: Vec<f64> = doc["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["device"] == "all")
        .map(|b| f64_of(b, "exposed_communication_us"))
        .collect();
    assert!(close(exposed[0], 85_202.0, 1e-4), "{exposed:?}");
    assert!(close(exposed[1], 62_749.0, 1e-4), "{exposed:?}");
}

/// The busy part of the set-up calls comes from a partial as written:
/// from partials it gives the same savings, and an edited one (a busy
/// part beyond any time, or below 0) saves between nothing and the calls'
/// time, never a panic or more than was measured.
#[test]
fn set_up_savings_survive_partials_and_edits() {
    let dir = tempfile::tempdir().unwrap();
    let file = kineto("recorded/two-rank/rules/rank1.pt.trace.json.gz");
    let direct = by_rule(&report(std::slice::from_ref(&file), &[]).0, "alloc-churn");
    let partial = crate::common::partial_per_file(&[file], dir.path(), &[]).remove(0);
    let good: Value = serde_json::from_slice(&std::fs::read(&partial).unwrap()).unwrap();
    for (name, busy, want) in [
        ("as-written", None, f64_of(&direct, "savings_us")),
        ("huge", Some(i64::MAX), 0.0),
        ("negative", Some(i64::MIN), f64_of(&direct, "time_us")),
    ] {
        let mut doc = good.clone();
        if let Some(b) = busy {
            for k in doc["ranks"][0]["setup_calls"]["kinds"]
                .as_array_mut()
                .unwrap()
            {
                k["steady_busy_ns"] = b.into();
            }
        }
        let p = dir.path().join(format!("{name}.json"));
        std::fs::write(&p, serde_json::to_vec(&doc).unwrap()).unwrap();
        let (combined, _, _) = report(&[p], &["--combine"]);
        let saved = findings(&combined)
            .into_iter()
            .find(|f| f["rule"] == "alloc-churn")
            .map_or(0.0, |f| f64_of(&f, "savings_us"));
        assert!(close(saved, want, 1e-9), "{name}: {saved} against {want}");
    }
}

#[test]
fn findings_are_a_table_and_the_console_can_show_only_them() {
    let dir = tempfile::tempdir().unwrap();
    let run = generate(
        &dir.path().join("jit"),
        &["--straggler", "none", "--plant", "jit"],
    );
    let csv = dir.path().join("csv");
    let parquet = dir.path().join("pq");
    let out = crate::common::run(&[
        run.as_os_str(),
        "--findings".as_ref(),
        "--csv".as_ref(),
        csv.as_os_str(),
        "--parquet".as_ref(),
        parquet.as_os_str(),
    ]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with("tracestat: 2 ranks\n\nFindings"),
        "{stdout}"
    );
    assert!(!stdout.contains("Where the time went"), "{stdout}");
    assert!(stdout.contains("fix jit: build the modules before the loop"));
    let text = std::fs::read_to_string(csv.join("findings.csv")).unwrap();
    assert!(text.starts_with(
        "rule,rank,ranks,step,savings_us,savings_pct,savings_by,name,count,time_us,from_us,to_us,evidence,fix\n"
    ), "{text}");
    assert!(text.contains("\njit,all,2,,"), "{text}");
    assert!(parquet.join("findings.parquet").is_file());
    assert!(csv.join("copies.csv").is_file() && csv.join("setup_calls.csv").is_file());
}

/// Three ranks, one step (`PyTorch::ProfilerStep#1`, 0-5000 us), one
/// allreduce: each launches a gemm at 10 (running 20-120 on ranks 0 and 1,
/// 20-3120 on rank 2: 3 ms longer), waits for it until 5 us after it ends,
/// arrives at the allreduce 5 us later (130, 130, 3130), which all leave at
/// 3200 (70 us after the last arrival); the host then works until 5000.
fn three_ranks_one_slow(dir: &Path) -> Vec<PathBuf> {
    (0..3)
        .map(|r| {
            let mut t = crate::critical_path::Rank::new(r);
            let g = if r == 2 { 3100 } else { 100 };
            t.call("PyTorch::ProfilerStep#1", 0, 5000);
            t.launch("gemm_kernel", 10, 20, g);
            t.call("zeEventHostSynchronize", 30, g - 5);
            t.allreduce(20 + g + 10, 3200 - (20 + g + 10));
            t.write(dir)
        })
        .collect()
}

fn finding<'a>(doc: &'a Value, rule: &str, rank: &str) -> &'a Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == rule && f["rank"] == rank)
        .unwrap_or_else(|| panic!("no {rule} on rank {rank}: {}", doc["findings"]))
}

/// Worked out by hand: rank 2's kernels at the median rank's pace (100 of
/// its 3100 us) bring its arrival to 130 like the others', the allreduce
/// ends at 200 and the step at 200 + 1800 = 2000: imbalance's replay saves
/// 3000 us, exactly what ranks 0 and 1 waited for it, which is also the
/// straggler's bound (its arrival less the one before it).
#[test]
fn the_straggler_saves_by_replay_exactly_what_the_others_waited() {
    let dir = tempfile::tempdir().unwrap();
    let files = three_ranks_one_slow(dir.path());
    let (doc, _, stderr) = report(&files, &["--align", "none"]);
    assert!(stderr.is_empty(), "{stderr}");
    let f = finding(&doc, "imbalance", "2");
    assert_eq!(f["savings_by"], "replay", "{f}");
    assert!(close(f64_of(f, "savings_us"), 3000.0, 1e-9), "{f}");
    assert!(
        f["evidence"]
            .as_str()
            .unwrap()
            .ends_with("; savings by the what-if replay of the run's steps under rank:2=median"),
        "{f}"
    );
    let f = finding(&doc, "straggler", "2");
    assert_eq!(f["savings_by"], "bound", "{f}");
    assert!(close(f64_of(f, "savings_us"), 3000.0, 1e-9), "{f}");
    assert!(close(
        f64_of(finding(&doc, "straggler", "2"), "time_us"),
        3000.0,
        1e-9
    ));
    // The implicit replays are no what-if rows.
    assert_eq!(doc["what_if"], Value::Array(vec![]), "{}", doc["what_if"]);
}

/// `--partial` per rank then `--combine` gives the one run's findings,
/// replayed savings included; partials without the replay's slots (as an
/// older version wrote them) give the stated bound, said so.
#[test]
fn replayed_savings_survive_partials_and_older_partials_fall_back_to_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let files = three_ranks_one_slow(dir.path());
    let (one, _, _) = report(&files, &["--align", "none"]);
    let partials = crate::common::partial_per_file(&files, dir.path(), &[]);
    let (combined, _, _) = report(&partials, &["--combine", "--align", "none"]);
    assert_eq!(one["findings"], combined["findings"]);
    assert_eq!(one["what_if"], combined["what_if"]);
    // The same partials without the chain lengths of the replay.
    let mut older = Vec::new();
    for (i, p) in partials.iter().enumerate() {
        let mut doc: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
        let stripped = strip_key(&mut doc, "lens");
        assert!(stripped > 0, "the partial has chain lengths");
        let q = dir.path().join(format!("old{i}.json"));
        std::fs::write(&q, serde_json::to_vec(&doc).unwrap()).unwrap();
        older.push(q);
    }
    let (old, _, _) = report(&older, &["--combine", "--align", "none"]);
    for rule in ["straggler", "imbalance"] {
        let f = finding(&old, rule, "2");
        assert_eq!(f["savings_by"], "bound", "{f}");
    }
    // The bounds: the straggler's lateness, the compute excess over the
    // median of the other ranks (3100 - 100).
    assert!(close(
        f64_of(finding(&old, "straggler", "2"), "savings_us"),
        3000.0,
        1e-9
    ));
    assert!(close(
        f64_of(finding(&old, "imbalance", "2"), "savings_us"),
        3000.0,
        1e-9
    ));
}

/// Removes every member `key` of every object in `v`; how many.
fn strip_key(v: &mut Value, key: &str) -> usize {
    match v {
        Value::Object(m) => {
            let mut n = usize::from(m.remove(key).is_some());
            for x in m.values_mut() {
                n += strip_key(x, key);
            }
            n
        }
        Value::Array(a) => a.iter_mut().map(|x| strip_key(x, key)).sum(),
        _ => 0,
    }
}

/// A hand-made Kineto trace of rank 0: 200 `cudaMemcpyAsync` calls (every
/// 20 us, 5 us each), each copying `bytes` host to device from pinned
/// memory in 8 us, 6 us after its call; the size is only in
/// `args.bytes`, as Kineto writes it (docs/formats.md#kineto-json-events).
fn kineto_copies(path: &Path, bytes: u64) -> PathBuf {
    let mut events = Vec::new();
    for i in 0..200u64 {
        let (at, id) = (1_000 + i * 20, i + 1);
        events.push(format!(
            r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 10, "tid": 10, "ts": {at}, "dur": 5, "args": {{"correlation": {id}}}}}"#
        ));
        events.push(format!(
            r#"{{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": {}, "dur": 8, "args": {{"device": 0, "context": 1, "stream": 7, "correlation": {id}, "bytes": {bytes}, "memory bandwidth (GB/s)": 0.5}}}}"#,
            at + 6
        ));
    }
    let text = format!(
        r#"{{"schemaVersion": 1, "distributedInfo": {{"rank": 0}}, "traceEvents": [{}]}}"#,
        events.join(",\n")
    );
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// Kineto copies' sizes reach the copies table, the events dataset and
/// the `small-copy` rule: 200 copies of 4 KiB are found with their count
/// and bytes, 200 of 1 MiB are not small.
#[test]
fn kineto_small_copies_are_found_by_their_args_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let small = kineto_copies(&dir.path().join("small.pt.trace.json"), 4096);
    let (doc, _, stderr) = report(std::slice::from_ref(&small), &[]);
    assert!(stderr.is_empty(), "{stderr}");
    let c = &doc["copies"][0];
    assert_eq!(c["copies"], 200, "{c}");
    assert_eq!(c["small"], 200, "{c}");
    assert_eq!(c["bytes"], 200 * 4096, "{c}");
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "small-copy")
        .unwrap_or_else(|| panic!("no small-copy: {}", doc["findings"]))
        .clone();
    assert_eq!(f["rank"], "0");
    assert_eq!(f["count"], 200);
    assert_eq!(f["name"], "Memcpy HtoD (Pinned -> Device)");
    assert!(close(f64_of(&f, "time_us"), 1600.0, 1e-9), "{f}");
    assert!(
        f["evidence"]
            .as_str()
            .unwrap()
            .contains("200 copies under 64 KiB (819200 bytes in all"),
        "{f}"
    );
    // Their 1600 us less 819200 bytes at 20 GB/s (40.96 us).
    assert_eq!(f["savings_by"], "bound");
    assert!(close(f64_of(&f, "savings_us"), 1600.0 - 40.96, 1e-9), "{f}");
    // The events dataset has each copy's size.
    let events = dir.path().join("events");
    let out = crate::events::export(std::slice::from_ref(&small), &events, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = crate::events::bytes_free::rows_of_dataset(&events);
    let copies: Vec<_> = rows
        .iter()
        .filter(|r| {
            crate::events::s(r, "name").as_deref() == Some("Memcpy HtoD (Pinned -> Device)")
        })
        .collect();
    assert_eq!(copies.len(), 200);
    assert!(copies
        .iter()
        .all(|r| crate::events::n(r, "bytes") == Some(4096)));

    let large = kineto_copies(&dir.path().join("large.pt.trace.json"), 1 << 20);
    let (doc, _, _) = report(&[large], &[]);
    assert_eq!(doc["copies"][0]["small"], 0);
    assert_eq!(doc["copies"][0]["bytes"], 200u64 << 20);
    assert!(
        !rules(&doc).iter().any(|r| r.starts_with("small-copy")),
        "{:?}",
        rules(&doc)
    );
}

/// The threshold holds for the savings a finding states, replayed or
/// bound: at least 1% of its rank's active window (the median rank's for
/// `all`). On the committed generated ranks the bound of rank 1's
/// imbalance passed it while its `rank:1=median` replay saved nothing:
/// it was listed saving 0.000 ms.
#[test]
fn every_finding_saves_at_least_its_threshold() {
    let gen: Vec<PathBuf> = crate::common::gen_files();
    for inputs in [gen.clone(), vec![kineto("recorded/planted")]] {
        let (doc, _, _) = report(&inputs, &[]);
        let mut active: Vec<(String, f64)> = doc["breakdown"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["device"] == "all")
            .map(|b| {
                (
                    b["rank"].as_str().unwrap().to_string(),
                    f64_of(b, "active_us"),
                )
            })
            .collect();
        active.sort_by(|a, b| a.1.total_cmp(&b.1));
        let n = active.len();
        let median = (active[(n - 1) / 2].1 + active[n / 2].1) / 2.0;
        let found = findings(&doc);
        assert!(!found.is_empty(), "{inputs:?}");
        for f in &found {
            let rank = f["rank"].as_str().unwrap();
            let window = match rank {
                "all" => median,
                r => active.iter().find(|a| a.0 == r).unwrap().1,
            };
            let saves = f64_of(f, "savings_us");
            assert!(saves > 0.0 && saves >= 0.01 * window - 0.001, "{f}");
        }
    }
    let (doc, _, _) = report(&gen, &[]);
    assert!(
        !rules(&doc).contains(&"imbalance".to_string()),
        "{:?}",
        rules(&doc)
    );
}
