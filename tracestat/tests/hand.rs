//! Hand-built traces with known answers (testdata/tracestat/make_hand.py
//! writes them; the numbers below are worked out from its timeline).

use crate::common::*;

#[test]
fn breakdown_overlap_gaps_on_two_engines_and_a_copy_engine() {
    let (doc, stdout, stderr) = report(
        &[data("hand.1000.0.json")],
        &["--short-kernel", "60us", "--tree"],
    );
    assert!(stderr.is_empty(), "{stderr}");
    let b = &doc["breakdown"][0];
    assert_eq!(b["rank"], "0");
    assert_eq!(b["device"], "all");
    // Wall: first host call at 0 to the last sync's end at 1100 us.
    close(f(&b["wall_us"]), 1100.0, "wall");
    // Kernels: gemm 100-300, bias_add 300-350 (engine A), allreduce 200-400
    // (engine B), copy 380-420 (copy engine), softmax 800-900.
    // Union 100-420 + 800-900 = 420 us, not the 590 us sum.
    close(f(&b["busy_us"]), 420.0, "busy");
    close(f(&b["kernel_time_us"]), 590.0, "kernel sum");
    close(f(&b["compute_us"]), 350.0, "compute");
    close(
        f(&b["communication_us"]),
        50.0,
        "communication (350-400 only)",
    );
    close(f(&b["memory_us"]), 20.0, "memory (400-420 only)");
    close(f(&b["idle_us"]), 680.0, "idle");
    let shares =
        f(&b["compute_pct"]) + f(&b["communication_pct"]) + f(&b["memory_pct"]) + f(&b["idle_pct"]);
    close(shares, 100.0, "shares add up");
    close(
        f(&b["compute_pct"]),
        100.0 * 350.0 / 1100.0,
        "compute share",
    );
    // Communication 200-400, compute runs in 200-350 of it.
    close(f(&b["communication_total_us"]), 200.0, "comm union");
    close(f(&b["overlap_us"]), 150.0, "overlap");
    close(f(&b["overlap_pct"]), 75.0, "overlap %");
    close(f(&b["exposed_communication_us"]), 50.0, "exposed");
    assert_eq!(b["launches"], 5);

    // One gap 420-800: the host sits in zeEventHostSynchronize (400-700)
    // for 280 us of it, launches for 5 us, nothing for 95 us.
    let g = &doc["idle_gaps"][0];
    assert_eq!(g["count"], 1);
    close(f(&g["total_us"]), 380.0, "gap total");
    close(f(&g["longest_us"]), 380.0, "longest");
    assert_eq!(g["histogram"][2][0], "100us-1ms");
    assert_eq!(g["histogram"][2][1], 1);
    let causes = g["causes"].as_array().unwrap();
    let cause = |name: &str| causes.iter().find(|c| c[0] == name).unwrap();
    assert_eq!(cause("sync")[1], 1, "main cause sync");
    close(f(&cause("sync")[2]), 280.0, "sync time");
    close(f(&cause("host_busy")[2]), 5.0, "busy time");
    close(f(&cause("unknown")[2]), 95.0, "unknown time");
    close(f(&cause("collective")[2]), 0.0, "collective time");

    // Launch latencies 80, 250, 85, 220, 100 us.
    let l = &doc["launches"][0];
    assert_eq!(l["kernels"], 5);
    assert_eq!(l["with_flow"], 5);
    close(f(&l["latency_mean_us"]), 147.0, "latency mean");
    near(f(&l["latency_p50_us"]), 100.0, 0.005, "latency p50");
    close(f(&l["latency_max_us"]), 250.0, "latency max");
    // Short (< 60 us): bias_add 50 and the copy 40.
    assert_eq!(l["short_kernels"], 2);
    close(f(&l["short_launch_pct"]), 40.0, "short launches");
    close(f(&l["short_time_us"]), 90.0, "short time");
    close(
        f(&l["short_time_pct"]),
        100.0 * 90.0 / 590.0,
        "short time %",
    );

    // Host ranges: gemm launched inside mm inside linear; bias_add inside
    // linear only; allreduce inside the oneCCL call; copy and softmax in none.
    let linear = row(&doc, "host_ranges", "name", "PyTorch::aten::linear");
    assert_eq!(linear["launches"], 2);
    close(f(&linear["gpu_inclusive_us"]), 250.0, "linear inclusive");
    close(f(&linear["gpu_self_us"]), 50.0, "linear self");
    close(f(&linear["host_us"]), 100.0, "linear host");
    let mm = row(&doc, "host_ranges", "name", "PyTorch::aten::mm");
    close(f(&mm["gpu_inclusive_us"]), 200.0, "mm inclusive");
    close(f(&mm["gpu_self_us"]), 200.0, "mm self");
    let ccl = row(&doc, "host_ranges", "name", "oneCCL::API::ALLREDUCE_SMALL");
    close(f(&ccl["gpu_inclusive_us"]), 200.0, "ccl inclusive");
    // The tree: linear > mm > gemm (shape cut off).
    let tree = doc["host_tree"].as_array().unwrap();
    assert!(tree.iter().any(|t| t["path"]
        == serde_json::json!(["PyTorch::aten::linear", "PyTorch::aten::mm"])
        && t["kernel"] == "gemm"
        && f(&t["gpu_us"]) == 200.0));
    assert!(
        stdout.contains(
            "PyTorch::aten::linear\n  0.050 ms  1 x  bias_add\n  PyTorch::aten::mm\n    0.200 ms  1 x  gemm\n"
        ),
        "{stdout}"
    );

    // Categories (built-in): compute gemm+bias+softmax, communication the
    // allreduce kernel, memory the copy.
    let compute = row(&doc, "categories", "category", "compute");
    assert_eq!(compute["count"], 3);
    close(f(&compute["total_us"]), 350.0, "compute total");
    close(
        f(&compute["share_pct"]),
        100.0 * 350.0 / 590.0,
        "compute share",
    );
    let comm = row(&doc, "categories", "category", "communication");
    close(f(&comm["total_us"]), 200.0, "comm total");
    let mem = row(&doc, "categories", "category", "memory");
    close(f(&mem["total_us"]), 40.0, "memory total");
    let gemm = row(&doc, "kernels", "name", "gemm");
    close(f(&gemm["max_us"]), 200.0, "gemm max");
    // Console sections are there, in plain words.
    for head in [
        "Where the time went",
        "Communication overlapped by compute",
        "GPU idle gaps",
        "Kernel launches",
        "Host ranges",
        "Collectives across ranks",
        "Stragglers",
        "Kernel time by category",
    ] {
        assert!(stdout.contains(head), "missing section {head}");
    }
    // One rank has nothing to compare with: no straggler is named, in the
    // console or in the JSON (docs/tracestat.md#stragglers).
    assert!(
        stdout.starts_with(
            "tracestat: 1 rank\n\
             straggler: none: one rank, nothing to compare with\n\
             GPU time against the median: none: one rank, nothing to compare with (rank 0: 0.590 ms of GPU time)\n"
        ),
        "{stdout}"
    );
    assert!(doc["straggler"].is_null(), "{}", doc["straggler"]);
    assert_eq!(doc["stragglers"].as_array().unwrap().len(), 1);
    close(f(&doc["stragglers"][0]["vs_median_pct"]), 0.0, "vs median");
}

#[test]
fn tiles_get_their_own_rows() {
    let (doc, _, _) = report(&[data("tiles.json")], &[]);
    let rows = doc["breakdown"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    // Rank-less file: labelled by input position.
    assert_eq!(rows[0]["rank"], "#0");
    close(f(&rows[0]["busy_us"]), 150.0, "union of both tiles");
    close(f(&rows[0]["wall_us"]), 200.0, "wall");
    assert!(rows[1]["device"].as_str().unwrap().ends_with("tile 0"));
    close(f(&rows[1]["busy_us"]), 100.0, "tile 0");
    close(f(&rows[1]["idle_us"]), 100.0, "tile 0 idle");
    assert!(rows[2]["device"].as_str().unwrap().ends_with("tile 1"));
    close(f(&rows[2]["busy_us"]), 100.0, "tile 1");
}

#[test]
fn collective_skew_last_arriver_waits_and_straggler() {
    let (doc, stdout, stderr) = report(&coll_files(), &[]);
    assert_eq!(doc["ranks"], 4);
    let c = doc["collectives"].as_array().unwrap();
    assert_eq!(c.len(), 2);
    // Allreduce: starts 1000/1200/4000/1100, all end at 4500.
    let ar = &c[0];
    assert_eq!(ar["name"], "oneCCL::API::ALLREDUCE_SMALL");
    assert_eq!(ar["bytes"], 1048576);
    assert_eq!(ar["ranks"], 4);
    close(f(&ar["skew_us"]), 3000.0, "skew");
    assert_eq!(ar["last_rank"], "2");
    close(f(&ar["duration_us"]), 3500.0, "duration");
    close(f(&ar["transfer_us"]), 500.0, "transfer");
    // 1 MiB * 2 * (4-1)/4 / 500 us.
    close(
        f(&ar["bus_gbps"]),
        1048576.0 * 1.5 / 500_000.0,
        "bus bandwidth",
    );
    assert_eq!(ar["consistent"], true);
    let waits: Vec<f64> = ar["waits_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| f(&w[1]))
        .collect();
    assert_eq!(waits, vec![3000.0, 2800.0, 0.0, 2900.0]);
    // Barrier: rank 3 was cut before it; starts 6000/6100/6050.
    let b = &c[1];
    assert_eq!(b["name"], "MPI::MPI_Barrier");
    assert_eq!(b["ranks"], 3);
    assert_eq!(b["last_rank"], "1");
    close(f(&b["skew_us"]), 100.0, "barrier skew");
    assert!(b["bus_gbps"].is_null());
    // Straggler table and line.
    let s2 = row(&doc, "stragglers", "rank", "2");
    assert_eq!(s2["arrived_last"], 1);
    close(f(&s2["wait_caused_us"]), 8700.0, "wait caused by rank 2");
    close(f(&s2["own_wait_us"]), 50.0, "rank 2 waited");
    let s0 = row(&doc, "stragglers", "rank", "0");
    close(f(&s0["own_wait_us"]), 3100.0, "rank 0 waited");
    assert_eq!(doc["straggler"]["rank"], "2");
    assert!(stdout.contains(
        "straggler: rank 2: arrived last at 1 of 2 collectives and made the other ranks wait 8.700 ms in total"
    ));
    // mergetrace's median comparison stays: GPU times 100/200/300/150.
    assert!(
        stdout.contains("rank 2: 0.300 ms of GPU time, +71.4% against the median rank (0.175 ms)"),
        "{stdout}"
    );
    // Kernel spread across ranks.
    let gemm = row(&doc, "kernels", "name", "gemm");
    assert_eq!(gemm["count"], 4);
    assert_eq!(gemm["rank_min"], "0");
    close(f(&gemm["rank_median_us"]), 175.0, "median rank");
    assert_eq!(gemm["rank_max"], "2");
    close(f(&gemm["rank_max_us"]), 300.0, "max rank");
    // Rank 3 was cut: used up to its last complete event, reported.
    assert_eq!(doc["truncated"][0]["rank"], "3");
    close(
        f(&row(&doc, "breakdown", "rank", "3")["wall_us"]),
        4000.0,
        "rank 3 wall",
    );
    // Rank 1's implausible events: counted, left out, one warning line.
    let kinds: Vec<&str> = doc["implausible"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "negative duration",
            "zero-length kernel",
            "clock jump",
            "kernel longer than the wall time"
        ]
    );
    let r1 = row(&doc, "breakdown", "rank", "1");
    close(f(&r1["kernel_time_us"]), 200.0, "only gemm kept on rank 1");
    close(f(&r1["wall_us"]), 5900.0, "rank 1 wall unaffected");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with("tracestat: warning: 4 implausible events left out"));
    assert!(lines[1].contains("coll.2003.3.json: cut short"));
}

#[test]
fn generated_traces_name_the_straggler_and_shares_add_up() {
    // testdata/tracestat/gen: generated data (`--seed 2 trace --ranks 3
    // --events 500` of an earlier generator); the generator's straggler is rank 1 (compute 1.45x).
    let (doc, stdout, _) = report(&gen_files(), &[]);
    assert_eq!(doc["ranks"], 3);
    assert_eq!(doc["straggler"]["rank"], "1");
    assert!(
        stdout.contains("straggler: rank 1: most compute time"),
        "{stdout}"
    );
    for b in doc["breakdown"].as_array().unwrap() {
        let sum = f(&b["compute_pct"])
            + f(&b["communication_pct"])
            + f(&b["memory_pct"])
            + f(&b["idle_pct"]);
        close(sum, 100.0, "shares");
        close(
            f(&b["compute_us"]) + f(&b["communication_us"]) + f(&b["memory_us"]),
            f(&b["busy_us"]),
            "classes add up to busy",
        );
        assert!(f(&b["busy_us"]) <= f(&b["kernel_time_us"]) + 1e-6);
    }
    // Every kernel's submission is found through its flow.
    for l in doc["launches"].as_array().unwrap() {
        assert_eq!(l["kernels"], l["with_flow"]);
    }
    assert!(!doc["collectives"].as_array().unwrap().is_empty());
    let comm = row(&doc, "categories", "category", "communication");
    assert!(f(&comm["total_us"]) > 0.0);
}

#[test]
fn csv_writes_one_file_per_table() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("tables");
    let mut args: Vec<std::ffi::OsString> = coll_files().into_iter().map(Into::into).collect();
    args.push("--csv".into());
    args.push(csv.clone().into());
    args.push("--quiet".into());
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let out = run(&refs);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    let mut names: Vec<String> = std::fs::read_dir(&csv)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "breakdown.csv",
            "categories.csv",
            "collective_summary.csv",
            "collective_waits.csv",
            "collectives.csv",
            "copies.csv",
            "critical_path.csv",
            "critical_path_kinds.csv",
            "critical_path_names.csv",
            "critical_path_steps.csv",
            "findings.csv",
            "heatmap.csv",
            "host_ranges.csv",
            "idle_gaps.csv",
            "implausible.csv",
            "kernels.csv",
            "launches.csv",
            "overlap.csv",
            "setup_calls.csv",
            "step_ranks.csv",
            "step_spread.csv",
            "steps.csv",
            "stragglers.csv",
        ]
    );
    let waits = std::fs::read_to_string(csv.join("collective_waits.csv")).unwrap();
    assert!(waits.starts_with("name,comm,bytes,occurrence,rank,wait_us\n"));
    assert!(waits.contains("oneCCL::API::ALLREDUCE_SMALL,,1048576,1,3,2900.000\n"));
    let heat = std::fs::read_to_string(csv.join("heatmap.csv")).unwrap();
    assert_eq!(heat.lines().count(), 5);
    assert_eq!(heat.lines().next().unwrap().split(',').count(), 201);
}

#[test]
fn html_page_is_offline_and_has_both_pictures() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let mut args: Vec<std::ffi::OsString> = coll_files().into_iter().map(Into::into).collect();
    args.extend(["--html".into(), html.clone().into(), "-q".into()]);
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    assert!(run(&refs).status.success());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(
        page.matches("<svg").count(),
        3,
        "breakdown bars, heatmap and the critical path's Gantt chart"
    );
    assert!(!page.contains("<script"));
    // Nothing fetched from elsewhere: the only URL is the SVG namespace.
    assert_eq!(
        page.matches("http").count(),
        page.matches("http://www.w3.org/2000/svg").count()
    );
    assert!(page.contains("<p>Straggler: rank 2: arrived last"));
    for rank in ["rank 0", "rank 1", "rank 2 (straggler)", "rank 3"] {
        assert!(page.contains(&format!(">{rank}</text>")), "{rank}");
    }
    // The bars show the same shares as the headline table: of each rank's
    // active window, not of its wall time (docs/tracestat.md#html-page).
    let (doc, _, _) = report(&coll_files(), &[]);
    for row in doc["breakdown"].as_array().unwrap() {
        if row["device"] != "all" {
            continue;
        }
        let rank = row["rank"].as_str().unwrap();
        let active = row["compute_active_pct"].as_f64().unwrap();
        let label = if rank == "2" {
            "rank 2 (straggler)"
        } else {
            &format!("rank {rank}")
        };
        let title = format!("<title>{label}: compute {active:.2}%</title>");
        assert!(page.contains(&title), "{title} not in the page");
    }
}

#[test]
fn pftrace_gives_the_report_of_the_same_json_trace() {
    // testdata/tracestat/gen-pftrace: the same generator run as gen/ with
    // --format pftrace (same events, ns timestamps).
    let mut pf: Vec<std::path::PathBuf> = std::fs::read_dir(data("gen-pftrace"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pf.sort();
    let (mut a, _, stderr) = report(&pf, &["--tree=2"]);
    assert!(stderr.is_empty(), "{stderr}");
    let (mut b, _, _) = report(&gen_files(), &["--tree=2"]);
    for doc in [&mut a, &mut b] {
        for row in doc["breakdown"].as_array_mut().unwrap() {
            row.as_object_mut().unwrap().remove("file");
        }
    }
    assert_eq!(a, b);
    // A .pftrace cut mid-record keeps its complete records, with a warning.
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(&pf[1]).unwrap();
    let cut = dir.path().join("python.100065.1.pftrace");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3 + 3]).unwrap();
    let (doc, _, stderr) = report(&[pf[0].clone(), cut], &[]);
    assert_eq!(doc["ranks"], 2);
    assert_eq!(doc["truncated"][0]["rank"], "1");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("cut short"), "{stderr}");
}

#[test]
fn nested_same_name_ranges_count_once_and_gaps_in_collectives() {
    // PyTorch::op (0-100) holds PyTorch::op (10-50) which launches k1 at 20
    // (runs 30-60); a oneCCL call (200-400) launches k2 at 210 (runs
    // 220-240) and the GPU idles in it until k3 (launched at 450) runs
    // 460-470. Gap 240-460: collective 240-400 (160 us), busy 450-455 (5),
    // unknown 55.
    let t = |us: f64| format!("{:.6}", 1_700_000_000_000_000.0 + us);
    let host = |name: &str, s: f64, d: f64| {
        format!("{{\"ph\": \"X\", \"tid\": 1, \"pid\": 1, \"name\": \"{name}\", \"cat\": \"cpu_op\", \"ts\": {}, \"dur\": {d:.6}, \"id\": 0}}", t(s))
    };
    let kernel = |name: &str, s: f64, d: f64, id: u32| {
        format!("{{\"ph\": \"X\", \"tid\": 9, \"pid\": 9, \"name\": \"{name}\", \"cat\": \"gpu_op\", \"ts\": {}, \"dur\": {d:.6}, \"args\": {{\"id\": \"{id}\"}}}}", t(s))
    };
    let flow = |s: f64, id: u32| {
        format!("{{\"ph\": \"s\", \"tid\": 1, \"pid\": 1, \"name\": \"dep\", \"cat\": \"Flow_H2D_{id}_0\", \"ts\": {}, \"id\": {id}}}", t(s))
    };
    let events = [
        kernel("k1", 30.0, 30.0, 1),
        kernel("k2", 220.0, 20.0, 2),
        kernel("k3", 460.0, 10.0, 3),
        host("zeCommandListAppendLaunchKernel", 20.0, 2.0),
        flow(20.0, 1),
        host("PyTorch::op", 10.0, 40.0),
        host("PyTorch::op", 0.0, 100.0),
        host("zeCommandListAppendLaunchKernel", 210.0, 2.0),
        flow(210.0, 2),
        host("oneCCL::API::ALLREDUCE_SMALL", 200.0, 200.0),
        host("zeCommandListAppendLaunchKernel", 450.0, 5.0),
        flow(450.0, 3),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested.json");
    std::fs::write(
        &path,
        format!("{{ \"traceEvents\":[\n{}\n]\n}}\n", events.join(",\n")),
    )
    .unwrap();
    let (doc, _, _) = report(&[path], &[]);
    let op = row(&doc, "host_ranges", "name", "PyTorch::op");
    assert_eq!(op["launches"], 1);
    close(
        f(&op["gpu_inclusive_us"]),
        30.0,
        "nested same name counted once",
    );
    close(f(&op["gpu_self_us"]), 30.0, "self");
    assert_eq!(op["calls"], 2);
    close(f(&op["host_us"]), 100.0, "host time is the union");
    // k2 was launched inside the collective: communication.
    close(
        f(&doc["breakdown"][0]["communication_us"]),
        20.0,
        "k2 is communication",
    );
    let g = &doc["idle_gaps"][0];
    assert_eq!(g["count"], 2);
    let causes = g["causes"].as_array().unwrap();
    let cause = |name: &str| causes.iter().find(|c| c[0] == name).unwrap().clone();
    // Gap 60-220: host busy in PyTorch::op until 100 (40 us), then the
    // collective 200-220 (20), unknown 100. Gap 240-460 as above.
    close(f(&cause("collective")[2]), 20.0 + 160.0, "collective time");
    close(f(&cause("host_busy")[2]), 40.0 + 5.0, "busy time");
    close(f(&cause("unknown")[2]), 100.0 + 55.0, "unknown time");
    assert_eq!(cause("collective")[1], 1, "main cause of the second gap");
    assert_eq!(cause("unknown")[1], 1, "main cause of the first gap");
}

#[test]
fn merged_trace_splits_into_its_ranks() {
    // testdata/tracestat/merged.json: `mergetrace -o merged.json coll.*.json`.
    let (mut merged, _, _) = report(&[data("merged.json")], &[]);
    let (mut files, _, _) = report(&coll_files(), &[]);
    for doc in [&mut merged, &mut files] {
        for row in doc["breakdown"].as_array_mut().unwrap() {
            row.as_object_mut().unwrap().remove("file");
        }
        doc.as_object_mut().unwrap().remove("truncated");
    }
    assert_eq!(merged["ranks"], 4);
    assert_eq!(merged, files);
}

/// `--parquet DIR` writes every table of `--csv DIR` (same run) under the
/// same name, with the same values, typed (docs/formats.md#parquet-tables).
#[test]
fn parquet_dir_holds_the_csv_tables_typed() {
    use unitrace_render::parquet::ColumnType;
    for (inputs, extra) in [(coll_files(), vec![]), (gen_files(), vec!["--tree=3"])] {
        let dir = tempfile::tempdir().unwrap();
        let (csv, pq) = (dir.path().join("csv"), dir.path().join("pq"));
        let mut args: Vec<std::ffi::OsString> = inputs.into_iter().map(Into::into).collect();
        args.extend([
            "--csv".into(),
            csv.clone().into(),
            "--parquet".into(),
            pq.clone().into(),
            "-q".into(),
        ]);
        args.extend(extra.iter().map(Into::into));
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let out = run(&refs);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut names: Vec<String> = std::fs::read_dir(&csv)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut rows = 0;
        for name in &names {
            let stem = name.strip_suffix(".csv").unwrap();
            let c = std::fs::read(csv.join(name)).unwrap();
            let p = std::fs::read(pq.join(format!("{stem}.parquet"))).unwrap();
            rows += c.iter().filter(|&&b| b == b'\n').count() - 1;
            unitrace_render::table::same_as_csv(&c, p).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(rows > 20, "{rows}");
        assert_eq!(std::fs::read_dir(&pq).unwrap().count(), names.len());
        let schema = unitrace_render::table::parquet_schema(
            std::fs::read(pq.join("kernels.parquet")).unwrap(),
        )
        .unwrap();
        let ty = |n: &str| schema.columns[schema.index_of(n).unwrap()].ty;
        assert_eq!(
            [ty("kernel"), ty("count"), ty("total_us"), ty("rank_min")],
            [
                ColumnType::Utf8,
                ColumnType::Int64,
                ColumnType::Float64,
                ColumnType::Utf8
            ]
        );
    }
}
