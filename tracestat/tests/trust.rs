//! Answers people can trust at a glance (docs/tracestat.md#breakdown,
//! #windows, #clock-alignment, #stragglers): the active window and the
//! idle around it, `--from/--to`, clocks lined up from matched
//! collectives, and a straggler only when one rank stands out. Every
//! number is worked out by hand from the hand-built traces.

use std::path::{Path, PathBuf};

use crate::common::*;

#[test]
fn the_active_window_separates_start_up_and_shutdown_from_gaps() {
    // hand.1000.0.json: events 0-1100 us; device work 100-420 and 800-900.
    let (doc, stdout, _) = report(&[data("hand.1000.0.json")], &[]);
    let b = &doc["breakdown"][0];
    close(f(&b["active_us"]), 800.0, "active window 100-900");
    close(f(&b["idle_before_us"]), 100.0, "before the first kernel");
    close(f(&b["idle_between_us"]), 380.0, "the one gap 420-800");
    close(f(&b["idle_after_us"]), 200.0, "after the last kernel");
    close(
        f(&b["idle_before_us"]) + f(&b["idle_between_us"]) + f(&b["idle_after_us"]),
        f(&b["idle_us"]),
        "the three idles make the wall's idle",
    );
    close(
        f(&b["busy_active_pct"]),
        100.0 * 420.0 / 800.0,
        "busy of active",
    );
    close(
        f(&b["compute_active_pct"]),
        100.0 * 350.0 / 800.0,
        "compute of active",
    );
    close(
        f(&b["idle_active_pct"]),
        100.0 * 380.0 / 800.0,
        "idle of active",
    );
    // The console's headline is the active window, in one time unit.
    let head = stdout
        .lines()
        .skip_while(|l| !l.starts_with("Where the time went"))
        .nth(1)
        .unwrap();
    // The wall of 1.1 ms sets the unit of the table's times.
    assert!(
        head.contains("active_ms") && head.contains("busy_%"),
        "{head}"
    );
    assert!(!head.contains("_us"), "one time unit per table: {head}");
}

#[test]
fn from_and_to_restrict_every_analysis() {
    // 350-850 us: allreduce 350-400 (communication), copy 380-420
    // (memory), softmax 800-850 (compute); gemm and bias_add end by 350.
    let (doc, _, _) = report(
        &[data("hand.1000.0.json")],
        &["--from", "350us", "--to", "850us"],
    );
    let b = &doc["breakdown"][0];
    close(f(&b["wall_us"]), 500.0, "the window");
    close(f(&b["busy_us"]), 120.0, "350-420 and 800-850");
    close(f(&b["compute_us"]), 50.0, "softmax's half");
    close(f(&b["communication_us"]), 50.0, "allreduce 350-400");
    close(f(&b["memory_us"]), 20.0, "copy 400-420");
    assert_eq!(b["launches"], 3);
    let kernels: Vec<&str> = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert!(
        !kernels.contains(&"gemm") && kernels.contains(&"softmax"),
        "{kernels:?}"
    );
    // A window that ends before it starts is a usage error.
    let o = run(&[
        data("hand.1000.0.json").as_os_str(),
        "--from".as_ref(),
        "2ms".as_ref(),
        "--to".as_ref(),
        "1ms".as_ref(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--to must be later than --from"));
}

/// `coll_files()` with rank `r`'s clock moved by `shift_s` whole seconds.
fn shifted(dir: &Path, r: usize, shift_s: i64) -> Vec<PathBuf> {
    coll_files()
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            if i != r {
                return p;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // Every timestamp is 1700000000xxxxxx.xxxxxx us: its first ten
            // digits count whole seconds.
            let moved = format!("\"ts\": {}", 1_700_000_000i64 + shift_s);
            let out = dir.join(p.file_name().unwrap());
            std::fs::write(&out, text.replace("\"ts\": 1700000000", &moved)).unwrap();
            out
        })
        .collect()
}

#[test]
fn clocks_are_lined_up_from_the_ends_of_matched_collectives() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, _, _) = report(&coll_files(), &[]);
    let a = &plain["clock_alignment"];
    assert_eq!(a["status"], "not needed", "{a}");
    assert_eq!(a["trusted"], true);
    // Rank 2's clock 5 s ahead: as read, nothing lines up.
    let files = shifted(dir.path(), 2, 5);
    let (read, stdout, _) = report(&files, &["--align", "none"]);
    assert_eq!(read["clock_alignment"]["trusted"], false);
    assert!(
        stdout.contains("(skew, wait and bus bandwidth left out:"),
        "{stdout}"
    );
    assert!(!stdout.contains("Collective instances with the largest skew"));
    // Aligned: rank 2's offset is the 5 s, and the collectives, waits and
    // straggler are those of the run with one clock.
    let (aligned, stdout, _) = report(&files, &[]);
    let a = &aligned["clock_alignment"];
    assert_eq!(a["status"], "applied", "{a}");
    assert_eq!(a["trusted"], true);
    let offsets = a["offsets"].as_array().unwrap();
    close(f(&offsets[2][1]), 5e6, "rank 2's offset");
    close(f(&offsets[1][1]), 0.0, "rank 1's offset");
    close(
        f(&a["residual_max_us"]),
        0.0,
        "the ends coincide after aligning",
    );
    for key in [
        "collectives",
        "collective_summary",
        "stragglers",
        "straggler",
        "heatmap",
    ] {
        assert_eq!(aligned[key], plain[key], "{key}");
    }
    assert!(
        stdout.contains("applied: 0 of 2 matched collectives consistent as read, 2 after aligning"),
        "{stdout}"
    );
}

#[test]
fn no_straggler_is_named_when_no_rank_stands_out() {
    let dir = tempfile::tempdir().unwrap();
    // Three ranks with the hand trace's work (350 us of compute), rank 2's
    // softmax (800-900 us, alone on the device) 8.75 us longer: compute
    // +2.5%, under the 5% rule, so no straggler.
    let base = std::fs::read_to_string(data("hand.1000.0.json")).unwrap();
    let mut files = Vec::new();
    for (r, dur) in [(0, 100.0), (1, 100.0), (2, 108.75)] {
        let dur = format!("\"dur\": {dur:.6}");
        let text = base.replace("RANK 0 ", &format!("RANK {r} "));
        let text = scale_softmax(&text, &dur);
        let p = dir.path().join(format!("hand.{}.{r}.json", 1000 + r));
        std::fs::write(&p, text).unwrap();
        files.push(p);
    }
    let (doc, stdout, _) = report(&files, &[]);
    assert_eq!(
        doc["straggler"],
        serde_json::Value::Null,
        "{}",
        doc["straggler"]
    );
    let why = doc["no_straggler"].as_str().unwrap();
    assert!(why.starts_with("none: no rank stands out"), "{why}");
    assert!(
        stdout
            .contains("\nstraggler: none: no rank stands out (the most compute time, rank 2, is +"),
        "{stdout}"
    );
    // 25% more compute (softmax 187.5 us) is a straggler.
    let text = std::fs::read_to_string(&files[2]).unwrap();
    std::fs::write(&files[2], scale_softmax(&text, "\"dur\": 187.500000")).unwrap();
    let (doc, _, _) = report(&files, &[]);
    assert_eq!(doc["straggler"]["rank"], "2");
}

/// The rank with the most GPU time can be the one that waits: in
/// `sleep50` rank 0 waits 50 ms in NCCL kernels for rank 1's sleep, so the
/// median comparison names rank 0 while the straggler is rank 1; it says
/// rank 0's communication time beside (the breakdown's 60.48% of its
/// 85.782 ms active window), and mergetrace says the same
/// (docs/tracestat.md#stragglers).
#[test]
fn the_rank_with_the_most_gpu_time_says_its_communication() {
    let run =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded/rerun/sleep50");
    let (doc, stdout, _) = report(&[run], &[]);
    assert_eq!(doc["straggler"]["rank"], "1");
    let comm = f(&row(&doc, "breakdown", "rank", "0")["communication_us"]);
    let line = format!(
        "\nGPU time against the median: rank 0: 86.657 ms of GPU time ({:.3} ms communication), +46.9% against the median rank (59.003 ms)\n",
        comm / 1e3
    );
    assert!(stdout.contains(&line), "{line}\n{stdout}");
    near(comm, 51_884.0, 1e-4, "rank 0's communication");
}

/// The hand trace with softmax's `"dur"` replaced.
fn scale_softmax(text: &str, dur: &str) -> String {
    text.lines()
        .map(|l| {
            if l.contains("\"name\": \"softmax\"") && l.contains("gpu_op") {
                let at = l.find("\"dur\": ").unwrap();
                let end = at + l[at..].find(',').unwrap();
                format!("{}{dur}{}", &l[..at], &l[end..])
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn one_clean_error_per_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.1.0.json");
    std::fs::write(&empty, "").unwrap();
    let good = data("hand.1000.0.json");
    // Alone, an empty file is an error; among others a warning.
    let o = run(&[empty.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        err,
        format!(
            "tracestat: {}: no trace events (an empty file?)\n",
            empty.display()
        )
    );
    let o = run(&[empty.as_os_str(), good.as_os_str(), "-q".as_ref()]);
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no trace events (an empty file?); left out")
    );
    // --ranks that no input holds: one line, exit 1; some missing: a warning.
    let coll = coll_files();
    let mut args: Vec<&std::ffi::OsStr> = coll.iter().map(|p| p.as_os_str()).collect();
    args.extend(["--ranks", "9"].map(std::ffi::OsStr::new));
    let o = run(&args);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "tracestat: --ranks: no input holds these ranks (the inputs hold rank(s) 0 1 2 3)\n"
    );
    args.pop();
    args.extend(["1,9", "-q"].map(std::ffi::OsStr::new));
    let o = run(&args);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--ranks: no input holds rank(s) 9"));
    // A metric CSV given as a trace says what it is.
    let csv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/sample/metrics.csv");
    let o = run(&[csv.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr)
        .ends_with("not a trace: a metric CSV (unitrace -k/-q)\n"));
    // An output over unitrace data of another kind is refused, the file kept.
    let keep = dir.path().join("keep.json");
    std::fs::copy(data("coll.2000.0.json"), &keep).unwrap();
    let before = std::fs::read(&keep).unwrap();
    let o = run(&[good.as_os_str(), "--json".as_ref(), keep.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("holds a Chrome/Perfetto trace; refusing to replace it with a report"));
    assert_eq!(std::fs::read(&keep).unwrap(), before);
}

/// Arrivals on clocks that do not line up are left off the screens: the
/// committed generated ranks' collectives never line up, so the stragglers
/// table shows no `last`, `caused` or `waited` (the files keep them); the
/// ranks of `coll.*.json` line up and show them.
#[test]
fn arrivals_are_shown_only_where_the_clocks_line_up() {
    let section = |stdout: &str| -> String {
        let from = stdout.find("Stragglers (").unwrap();
        let rest = &stdout[from..];
        rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string()
    };
    let (doc, stdout, _) = report(&gen_files(), &[]);
    let s = section(&stdout);
    assert!(s.contains("(arrivals left out: "), "{s}");
    let header = s
        .lines()
        .find(|l| l.trim_start().starts_with("rank"))
        .unwrap();
    for gone in ["last", "caused", "waited"] {
        assert!(
            !header.split_whitespace().any(|w| w.starts_with(gone)),
            "{header}"
        );
    }
    assert!(doc["stragglers"][0].get("wait_caused_us").is_some());
    let (_, stdout, _) = report(&coll_files(), &[]);
    let s = section(&stdout);
    assert!(!s.contains("(arrivals left out: "), "{s}");
    let header = s
        .lines()
        .find(|l| l.trim_start().starts_with("rank"))
        .unwrap();
    for shown in ["last", "caused_ms", "waited_ms"] {
        assert!(header.split_whitespace().any(|w| w == shown), "{header}");
    }
}

/// Two process groups per rank, recorded on 4 GPUs
/// (testdata/kineto/recorded/README.md#two-process-groups): the pairs
/// {0,1} and {2,3} all-reduce an activation (communicators 1 and 2), DDP
/// all-reduces the gradients over {0,2} and {1,3} (3 and 4); rank 3 sleeps
/// 50 ms before its pair's activation all-reduce in step 3. Every instance
/// has its 2 ranks. Rank 2 then waits about 49 ms for rank 3 in the
/// activation all-reduce, and arrives that much late at its gradient
/// all-reduce with rank 0: counted as rank 2's, the waits rank 3 caused
/// (115.6 ms) were not twice rank 2's (60.8 ms) and the straggler was read
/// from compute time (rank 1). The part of rank 2's lateness it spent
/// waiting for rank 3 is passed on to rank 3.
#[test]
fn a_wait_passed_on_through_another_group_is_its_causes() {
    let groups = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded/groups");
    let (doc, console, _) = report(&[groups], &[]);
    let all = doc["collectives"].as_array().unwrap();
    assert_eq!(all.len(), 40);
    for c in all {
        assert_eq!(c["ranks"], 2, "{c}");
        assert_eq!(c["consistent"], true, "{c}");
    }
    let on = |comm: &str| all.iter().filter(|c| c["comm"] == comm).count();
    assert_eq!([on("1"), on("2"), on("3"), on("4")], [5, 5, 15, 15]);
    assert_eq!(doc["straggler"]["rank"], "3", "{}", doc["straggler"]);
    let caused = |i: usize| f(&doc["stragglers"][i]["wait_caused_us"]) / 1e3;
    assert!((160.0..170.0).contains(&caused(3)), "rank 3: {}", caused(3));
    assert!(caused(2) < 15.0, "rank 2: {}", caused(2));
    assert!(caused(3) > 2.0 * caused(2).max(caused(1)).max(caused(0)));
    assert!(
        console.contains("straggler: rank 3: arrived last at 16 of 40 collectives"),
        "{console}"
    );
    // The slowest step goes through the sleep, and a sleep on one rank
    // right after the warm-up step is no warm-up of the run.
    assert_eq!(doc["slowest_step"], "3");
    assert!(
        console.contains("its longest stretch: rank 3, host, planted_sleep: 50.2"),
        "{console}"
    );
    assert!(!console.contains("looks like warm-up"), "{console}");
    // Rank 3's kernels took no longer than the others' in any step (it only
    // slept): bringing it to the median changes nothing, rather than slowing
    // steps 5 and 6 by 30% (docs/tracestat.md#what-if).
    let groups = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded/groups");
    let (doc, _, _) = report(&[groups], &["--what-if", "rank:3=median"]);
    for s in doc["what_if"].as_array().unwrap() {
        assert_eq!(f(&s["what_if_dur_us"]), f(&s["dur_us"]), "{s}");
    }
}

/// FSDP recorded on 4 GPUs (testdata/kineto/recorded/README.md#fsdp): one
/// unit per Linear layer, so per step 8 all-gathers (`_allgather_base`,
/// forward and backward) and 4 reduce-scatters (`_reduce_scatter_base`);
/// rank 2 sleeps 50 ms before its forward in step 4. Every all-gather and
/// reduce-scatter of the 5 steps matches on the 4 ranks and lines up, the
/// others wait about 47.5 ms for rank 2 at step 4's first all-gather, and
/// step 4's path goes through the sleep.
#[test]
fn fsdp_collectives_match_and_the_sleep_sets_its_step() {
    let fsdp = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded/fsdp");
    let (doc, console, _) = report(&[fsdp], &[]);
    let all = doc["collectives"].as_array().unwrap();
    let named = |n: &str| all.iter().filter(|c| c["name"] == n).count();
    assert_eq!(
        (named("_allgather_base"), named("_reduce_scatter_base")),
        (40, 20)
    );
    assert!(all
        .iter()
        .all(|c| c["ranks"] == 4 && c["consistent"] == true));
    let worst = all
        .iter()
        .max_by(|a, b| f(&a["skew_us"]).total_cmp(&f(&b["skew_us"])))
        .unwrap();
    assert_eq!(worst["last_rank"], "2");
    assert_eq!(worst["name"], "_allgather_base");
    close(
        f(&worst["skew_us"]),
        47_487.176,
        "the skew of step 4's first all-gather",
    );
    assert_eq!(doc["slowest_step"], "4");
    assert!(
        console.contains("its longest stretch: rank 2, host, planted_sleep: 50.2"),
        "{console}"
    );
    // Rank 1 arrives last by about 2 ms at most all-gathers: two ranks made
    // the others wait about as long, and the straggler line names both.
    assert!(
        console.contains(
            "; by arrivals, 2 ranks made the others wait, none twice as long as the rest: \
             rank 1 171.180 ms (last at 51 of 60), rank 2 162.393 ms (last at 8 of 60))"
        ),
        "{console}"
    );
    // Each is in `late_ranks`, the most first, and the straggler finding
    // looks at each (docs/findings.md#straggler).
    assert_eq!(doc["late_ranks"], serde_json::json!(["1", "2"]));
    for rank in ["1", "2"] {
        let found = (doc["findings"].as_array().unwrap().iter())
            .find(|x| x["rule"] == "straggler" && x["rank"] == rank)
            .unwrap_or_else(|| panic!("no straggler finding on rank {rank}: {}", doc["findings"]));
        let text = found["evidence"].as_str().unwrap();
        assert!(
            text.starts_with("one of 2 ranks whose arrivals made the others wait"),
            "{text}"
        );
    }
}
