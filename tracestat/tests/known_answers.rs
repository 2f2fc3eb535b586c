//! The numbers of the hand-built traces that `hand.rs` leaves out: the
//! heatmap, the collective summary and every straggler column, the rest of
//! the launch, host-range, tree and kernel columns, device rows of a rank
//! with two GPUs, the implausible kinds not in `coll.*`, `--schema`
//! against the built-in classes, collectives as `B`/`E` pairs, and the
//! console sections (testdata/tracestat/make_hand.py has the timelines of
//! the shared files, the others are built here; every expected value below
//! is worked out from them).

use crate::common::*;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The numbers of a JSON array.
fn nums(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(f).collect()
}

fn heat_row(doc: &Value, rank: &str) -> Vec<f64> {
    let row = doc["heatmap"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[0] == rank)
        .unwrap_or_else(|| panic!("no heatmap row of rank {rank}"));
    nums(&row[1])
}

#[test]
fn heatmap_bins_of_the_hand_trace() {
    // Wall 0-1100 us in 11 bins of 100 us; busy 100-420 and 800-900.
    let (doc, stdout, _) = report(&[data("hand.1000.0.json")], &["--bins", "11"]);
    let h = &doc["heatmap"];
    assert_eq!(h["bins"], 11);
    close(f(&h["bin_us"]), 100.0, "bin width");
    let expected = [0.0, 1.0, 1.0, 1.0, 0.2, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    let got = heat_row(&doc, "0");
    assert_eq!(got.len(), 11);
    // Each rank bins on a power-of-two grid first (2048 ns here), then
    // spreads those bins evenly: within 2.048 us of 100 us at a bin edge.
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!((g - e).abs() < 0.01, "bin {i}: {g} != {e}");
    }
    // Busy time is kept: sum of utilisation x bin width = busy_us.
    close(
        got.iter().sum::<f64>() * 100.0,
        f(&doc["breakdown"][0]["busy_us"]),
        "busy time conserved",
    );
    // The console draws the same row: one character per bin.
    assert!(
        stdout.contains(
            "\nGPU utilisation per rank over time\n(a column = 0.100 ms; ' ' idle, then .:-=+*#% to '@' fully busy)\nrank 0 | @@@:   @  |\n"
        ),
        "{stdout}"
    );
}

#[test]
fn heatmap_rows_keep_busy_time_and_show_the_late_rank() {
    for (files, bins) in [(coll_files(), "200"), (gen_files(), "37")] {
        let (doc, _, _) = report(&files, &["--bins", bins]);
        let h = &doc["heatmap"];
        let bin_us = f(&h["bin_us"]);
        let rows = h["rows"].as_array().unwrap();
        let labels: Vec<&str> = rows.iter().map(|r| r[0].as_str().unwrap()).collect();
        let ranks: Vec<&str> = doc["breakdown"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["device"] == "all")
            .map(|b| b["rank"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ranks, "rows sorted by rank id");
        for rank in ranks {
            let row = heat_row(&doc, rank);
            assert_eq!(row.len(), bins.parse::<usize>().unwrap());
            assert!(row.iter().all(|u| (0.0..=1.0).contains(u)));
            close(
                (row.iter().sum::<f64>() * bin_us * 1e3).round() / 1e3,
                f(&row_of(&doc, rank)["busy_us"]),
                "busy time conserved",
            );
        }
    }
    // coll: from 500 us to 6400 us in 200 bins of 29.5 us; rank 2's gemm
    // runs 600-900 us, i.e. bins 3.4 to 13.6: full in 4..=12, empty
    // outside 3..=13.
    let (doc, _, _) = report(&coll_files(), &[]);
    close(f(&doc["heatmap"]["bin_us"]), 29.5, "bin width");
    let r2 = heat_row(&doc, "2");
    for (i, u) in r2.iter().enumerate() {
        match i {
            4..=12 => assert!(*u > 0.99, "bin {i}: {u}"),
            3 | 13 => assert!(*u > 0.0 && *u < 1.0, "bin {i}: {u}"),
            _ => assert_eq!(*u, 0.0, "bin {i}"),
        }
    }
    // Rank 0's gemm (600-700 us) fills fewer bins than rank 2's.
    let busy_bins = |row: &[f64]| row.iter().filter(|u| **u > 0.5).count();
    assert!(busy_bins(&heat_row(&doc, "0")) < busy_bins(&r2));
}

fn row_of<'a>(doc: &'a Value, rank: &str) -> &'a Value {
    doc["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["rank"] == rank && b["device"] == "all")
        .unwrap()
}

#[test]
fn collective_summary_straggler_columns_and_the_barrier() {
    let (doc, stdout, _) = report(&coll_files(), &[]);
    // The barrier: ranks 0, 1, 2 at 6000, 6100, 6050, all end at 6200.
    let b = &doc["collectives"][1];
    assert_eq!(b["occurrence"], 1);
    close(f(&b["duration_us"]), 200.0, "barrier duration");
    close(f(&b["transfer_us"]), 100.0, "barrier transfer");
    close(
        f(&b["start_us"]),
        5500.0,
        "since the earliest start (500 us)",
    );
    assert_eq!(b["consistent"], true);
    assert!(b["bytes"].is_null());
    let waits: Vec<(String, f64)> = b["waits_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w[0].as_str().unwrap().to_string(), f(&w[1])))
        .collect();
    assert_eq!(
        waits,
        [
            ("0".to_string(), 100.0),
            ("1".to_string(), 0.0),
            ("2".to_string(), 50.0)
        ]
    );
    close(
        f(&doc["collectives"][0]["start_us"]),
        500.0,
        "allreduce start",
    );
    assert_eq!(doc["collectives_consistent"], 2);

    // Per collective type.
    let ar = row(
        &doc,
        "collective_summary",
        "name",
        "oneCCL::API::ALLREDUCE_SMALL",
    );
    assert_eq!(ar["instances"], 1);
    close(f(&ar["skew_mean_us"]), 3000.0, "skew mean");
    close(f(&ar["skew_max_us"]), 3000.0, "skew max");
    close(f(&ar["duration_mean_us"]), 3500.0, "duration");
    close(f(&ar["transfer_mean_us"]), 500.0, "transfer");
    assert_eq!(ar["bytes_total"], 1048576);
    close(
        f(&ar["bus_gbps_mean"]),
        1048576.0 * 1.5 / 500_000.0,
        "bus bandwidth",
    );
    close(f(&ar["wait_total_us"]), 8700.0, "wait total");
    assert_eq!(ar["most_often_last"], "2");
    let bar = row(&doc, "collective_summary", "name", "MPI::MPI_Barrier");
    assert_eq!(bar["bytes_total"], 0);
    assert!(bar["bus_gbps_mean"].is_null());
    close(f(&bar["wait_total_us"]), 150.0, "barrier wait total");
    assert_eq!(bar["most_often_last"], "1");

    // Every straggler column. GPU (= compute) time 100/200/300/150 us,
    // median 175; walls 5900/5900/5900/4000 us.
    let expect = [
        // rank, gpu, arrived last, collectives, caused, own wait, wall
        ("0", 100.0, 0, 2, 0.0, 3100.0, 5900.0),
        ("1", 200.0, 1, 2, 150.0, 2800.0, 5900.0),
        ("2", 300.0, 1, 2, 8700.0, 50.0, 5900.0),
        ("3", 150.0, 0, 1, 0.0, 2900.0, 4000.0),
    ];
    for (rank, gpu, last, colls, caused, own, wall) in expect {
        let s = row(&doc, "stragglers", "rank", rank);
        close(f(&s["gpu_time_us"]), gpu, "gpu time");
        close(
            f(&s["vs_median_pct"]),
            100.0 * (gpu - 175.0) / 175.0,
            "vs median",
        );
        close(f(&s["compute_us"]), gpu, "compute");
        close(
            f(&s["compute_vs_median_pct"]),
            100.0 * (gpu - 175.0) / 175.0,
            "compute vs median",
        );
        close(f(&s["communication_us"]), 0.0, "communication");
        close(f(&s["busy_pct"]), 100.0 * gpu / wall, "busy %");
        assert_eq!(s["arrived_last"], last, "rank {rank}");
        assert_eq!(s["collectives"], colls, "rank {rank}");
        close(f(&s["wait_caused_us"]), caused, "caused");
        close(f(&s["own_wait_us"]), own, "own wait");
    }
    assert_eq!(
        doc["straggler"]["median_comparison"],
        "rank 2: 0.300 ms of GPU time, +71.4% against the median rank (0.175 ms)"
    );

    // The console: the per-type line with bytes, the instance table (the
    // allreduce first: largest skew), the straggler row of rank 2.
    let types = console_rows(&stdout, "Collectives across ranks");
    assert_eq!(
        types[0],
        tokens("instances skew_mean_ms skew_max_ms transfer_mean_ms bytes bus_GB/s wait_ms most_often_last collective")
    );
    // By name (upper case first).
    assert_eq!(
        types[1],
        tokens("1 0.100 0.100 0.100 0 - 0.150 1 MPI::MPI_Barrier")
    );
    assert_eq!(
        types[2],
        tokens("1 3.000 3.000 0.500 1048576 3.15 8.700 2 oneCCL::API::ALLREDUCE_SMALL")
    );
    let instances = console_rows(
        &stdout,
        "Collective instances with the largest skew (2 of 2;",
    );
    assert_eq!(
        instances[1..],
        [
            tokens("1 4 0.500 3.000 2 8.700 3.500 1048576 3.15 yes oneCCL::API::ALLREDUCE_SMALL"),
            tokens("1 3 5.500 0.100 1 0.150 0.200 - - yes MPI::MPI_Barrier"),
        ]
    );
    let stragglers = console_rows(&stdout, "Stragglers");
    assert_eq!(
        stragglers[3],
        tokens("2 0.300 +71.4 0.300 +71.4 0.000 1 2 8.700 0.050")
    );
}

fn tokens(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// The lines of the console section whose heading starts with `heading`,
/// as whitespace-separated tokens (header row included, heading not).
fn console_rows(stdout: &str, heading: &str) -> Vec<Vec<String>> {
    let section = stdout
        .split("\n\n")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("no section {heading}: {stdout}"));
    section
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with('('))
        .map(tokens)
        .collect()
}

#[test]
fn launches_host_ranges_tree_and_kernels_of_the_hand_trace() {
    let (doc, stdout, _) = report(&[data("hand.1000.0.json")], &["--tree=1"]);
    let b = &doc["breakdown"][0];
    close(f(&b["busy_pct"]), 100.0 * 420.0 / 1100.0, "busy %");
    // One rank: no "all" row, no device rows.
    assert_eq!(doc["launches"].as_array().unwrap().len(), 1);
    let l = &doc["launches"][0];
    assert_eq!(l["device"], "all");
    // Latencies 80, 85, 100, 220, 250 us: p95 is the 5th of 5 (exact max).
    close(f(&l["latency_p95_us"]), 250.0, "latency p95");
    assert_eq!(l["negative_latency"], 0);
    // Default --short-kernel 10us: nothing is that short.
    assert_eq!(l["short_kernels"], 0);

    // Gaps: one of 380 us, in the 100us-1ms bucket.
    let g = &doc["idle_gaps"][0];
    close(f(&g["mean_us"]), 380.0, "mean gap");
    let hist: Vec<(String, u64, f64)> = g["histogram"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h[0].as_str().unwrap().to_string(),
                h[1].as_u64().unwrap(),
                f(&h[2]),
            )
        })
        .collect();
    let labels: Vec<&str> = hist.iter().map(|h| h.0.as_str()).collect();
    assert_eq!(
        labels,
        ["<10us", "10us-100us", "100us-1ms", "1ms-10ms", ">=10ms"]
    );
    let counts: Vec<u64> = hist.iter().map(|h| h.1).collect();
    assert_eq!(counts, [0, 0, 1, 0, 0]);
    close(hist[2].2, 380.0, "bucket time");

    // Host ranges: every column, in order of inclusive GPU time.
    let names: Vec<&str> = doc["host_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "PyTorch::aten::linear",
            "PyTorch::aten::mm",
            "oneCCL::API::ALLREDUCE_SMALL"
        ]
    );
    for (name, calls, host, launches, incl, self_launches, self_us) in [
        ("PyTorch::aten::linear", 1, 100.0, 2, 250.0, 1, 50.0),
        ("PyTorch::aten::mm", 1, 30.0, 1, 200.0, 1, 200.0),
        ("oneCCL::API::ALLREDUCE_SMALL", 1, 40.0, 1, 200.0, 1, 200.0),
    ] {
        let h = row(&doc, "host_ranges", "name", name);
        assert_eq!(h["ranks"], 1, "{name}");
        assert_eq!(h["calls"], calls, "{name}");
        close(f(&h["host_us"]), host, name);
        assert_eq!(h["launches"], launches, "{name}");
        close(f(&h["gpu_inclusive_us"]), incl, name);
        assert_eq!(h["self_launches"], self_launches, "{name}");
        close(f(&h["gpu_self_us"]), self_us, name);
    }

    // --tree=1: one range deep, so gemm (linear > mm) is under linear;
    // the copy and softmax were launched outside any range.
    let tree: Vec<(Vec<String>, String, u64, f64)> = doc["host_tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["path"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p.as_str().unwrap().to_string())
                    .collect(),
                t["kernel"].as_str().unwrap().to_string(),
                t["launches"].as_u64().unwrap(),
                f(&t["gpu_us"]),
            )
        })
        .collect();
    let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        tree,
        [
            (p(&[]), "softmax".into(), 1, 100.0),
            (p(&[]), "zeCommandListAppendMemoryCopy(M2D)".into(), 1, 40.0),
            (p(&["PyTorch::aten::linear"]), "bias_add".into(), 1, 50.0),
            (p(&["PyTorch::aten::linear"]), "gemm".into(), 1, 200.0),
            (
                p(&["oneCCL::API::ALLREDUCE_SMALL"]),
                "allreduce_kernel".into(),
                1,
                200.0
            ),
        ]
    );
    assert!(
        stdout.contains(
            "Op -> kernel tree (depth 1)\n(launched outside any host range)\n  0.100 ms  1 x  softmax\n  0.040 ms  1 x  zeCommandListAppendMemoryCopy(M2D)\nPyTorch::aten::linear\n  0.050 ms  1 x  bias_add\n  0.200 ms  1 x  gemm\noneCCL::API::ALLREDUCE_SMALL\n  0.200 ms  1 x  allreduce_kernel\n"
        ),
        "{stdout}"
    );

    // Categories and kernels: count, total, mean, p50, p95, max, share.
    let compute = row(&doc, "categories", "category", "compute");
    assert_eq!(compute["class"], "compute");
    close(f(&compute["mean_us"]), 350.0 / 3.0, "compute mean");
    // 50, 100, 200 us: p50 is the 2nd (a 1% bucket: within 0.5%), p95 the max.
    near(f(&compute["p50_us"]), 100.0, 0.005, "compute p50");
    close(f(&compute["p95_us"]), 200.0, "compute p95");
    close(f(&compute["max_us"]), 200.0, "compute max");
    for (cat, count, total) in [("communication", 1, 200.0), ("memory", 1, 40.0)] {
        let c = row(&doc, "categories", "category", cat);
        assert_eq!(c["count"], count);
        close(f(&c["total_us"]), total, cat);
        close(f(&c["share_pct"]), 100.0 * total / 590.0, cat);
        close(f(&c["p50_us"]), total, cat);
        close(f(&c["max_us"]), total, cat);
    }
    let shares: f64 = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| f(&k["share_pct"]))
        .sum();
    close(shares, 100.0, "kernel shares");
    let softmax = row(&doc, "kernels", "name", "softmax");
    assert_eq!(softmax["category"], "compute");
    assert_eq!(softmax["ranks"], 1);
    assert_eq!(softmax["rank_min"], "0");
    assert_eq!(softmax["rank_max"], "0");
    close(f(&softmax["rank_median_us"]), 100.0, "one rank");
    // The console's kernel table has p50 and the rank spread.
    let top = console_rows(&stdout, "Top kernels");
    assert_eq!(
        top[0],
        tokens("count total_us mean_us p50_us p95_us max_us share_% rank min/med/max (ms) kernel [category]")
    );
    // gemm and allreduce_kernel tie at 200 us: by category, then name.
    assert_eq!(
        top[1..3],
        [
            tokens("1 200.000 200.000 200.000 200.000 200.000 33.90 0:0.20/0.20/0:0.20 allreduce_kernel [communication]"),
            tokens("1 200.000 200.000 200.000 200.000 200.000 33.90 0:0.20/0.20/0:0.20 gemm [compute]")
        ]
    );
}

#[test]
fn tree_depth_attaches_with_equals_only() {
    // docs/tracestat.md#usage: `--tree` before the trace files takes no
    // file as its depth; `--tree=N` sets it.
    let input = data("hand.1000.0.json");
    let dir = tempfile::tempdir().unwrap();
    let doc_of = |args: &[&std::ffi::OsStr], name: &str| {
        let json = dir.path().join(name);
        let mut args = args.to_vec();
        args.extend(["--json".as_ref(), json.as_os_str()]);
        let o = run(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&std::fs::read(&json).unwrap()).unwrap()
    };
    let bare_first = doc_of(&["--tree".as_ref(), input.as_os_str()], "a.json");
    assert_eq!(bare_first["options"]["tree_depth"], 3);
    assert_eq!(bare_first["ranks"], 1);
    let three = doc_of(&[input.as_os_str(), "--tree=3".as_ref()], "b.json");
    assert_eq!(bare_first, three);
    assert!(!three["host_tree"].as_array().unwrap().is_empty());
    let one = doc_of(&["--tree=1".as_ref(), input.as_os_str()], "c.json");
    assert_eq!(one["options"]["tree_depth"], 1);
    assert_ne!(one["host_tree"], three["host_tree"]);
    // The old spelling `--tree 2`: 2 is an input; without such a file the
    // error says how to give the depth (exit 1, one line).
    let o = run(&["--tree".as_ref(), "2".as_ref(), input.as_os_str()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "tracestat: 2: no such file; a --tree depth attaches with `=`: --tree=2\n"
    );
    assert!(o.stdout.is_empty());
    // `--tree=` with no depth, or a word, is a usage error.
    for bad in ["--tree=", "--tree=x"] {
        let o = run(&[bad.as_ref(), input.as_os_str()]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
    }
}

#[test]
fn coll_launches_and_kernel_spread() {
    let (doc, _, _) = report(&coll_files(), &[]);
    // Each rank: one gemm launched at 500 us, started at 600 us.
    let rows = doc["launches"].as_array().unwrap();
    let ranks: Vec<(&str, &str)> = rows
        .iter()
        .map(|l| (l["rank"].as_str().unwrap(), l["device"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ranks,
        [
            ("0", "all"),
            ("1", "all"),
            ("2", "all"),
            ("3", "all"),
            ("all", "all")
        ]
    );
    let all = &rows[4];
    assert_eq!(all["kernels"], 4);
    assert_eq!(all["with_flow"], 4);
    for col in [
        "latency_mean_us",
        "latency_p50_us",
        "latency_p95_us",
        "latency_max_us",
    ] {
        close(f(&all[col]), 100.0, col);
    }
    // gemm 100/200/300/150 us over the ranks.
    let gemm = row(&doc, "kernels", "name", "gemm");
    close(f(&gemm["total_us"]), 750.0, "total");
    close(f(&gemm["mean_us"]), 187.5, "mean");
    near(f(&gemm["p50_us"]), 150.0, 0.005, "p50");
    close(f(&gemm["p95_us"]), 300.0, "p95");
    close(f(&gemm["max_us"]), 300.0, "max");
    close(f(&gemm["share_pct"]), 100.0, "share");
    close(f(&gemm["rank_min_us"]), 100.0, "min rank");
    // Rank 1's implausible events are counted per kind.
    let imp: Vec<(&str, &str, u64)> = doc["implausible"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["rank"].as_str().unwrap(),
                i["kind"].as_str().unwrap(),
                i["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        imp,
        [
            ("1", "negative duration", 1),
            ("1", "zero-length kernel", 1),
            ("1", "clock jump", 1),
            ("1", "kernel longer than the wall time", 1)
        ]
    );
}

const T: f64 = 1_700_000_000_000_000.0;

fn ts(us: f64) -> String {
    format!("{:.6}", T + us)
}

fn trace_file(dir: &Path, name: &str, events: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("{{ \"traceEvents\":[\n{}\n]\n}}\n", events.join(",\n")),
    )
    .unwrap();
    path
}

fn meta(kind: &str, pid: u64, tid: Option<u64>, label: &str) -> String {
    let tid = tid.map_or(String::new(), |t| format!(", \"tid\": {t}"));
    format!(
        "{{\"ph\": \"M\", \"name\": \"{kind}\", \"pid\": {pid}{tid}, \"ts\": {}, \"args\": {{\"name\": \"{label}\"}}}}",
        ts(0.0)
    )
}

fn kernel(pid: u64, name: &str, start: f64, dur: f64, id: u32) -> String {
    format!(
        "{{\"ph\": \"X\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"{name}\", \"cat\": \"gpu_op\", \"ts\": {}, \"dur\": {dur:.6}, \"args\": {{\"id\": \"{id}\"}}}}",
        ts(start)
    )
}

fn host(name: &str, start: f64, dur: f64) -> String {
    format!(
        "{{\"ph\": \"X\", \"tid\": 1, \"pid\": 1, \"name\": \"{name}\", \"cat\": \"cpu_op\", \"ts\": {}, \"dur\": {dur:.6}, \"id\": 0}}",
        ts(start)
    )
}

fn flow(start: f64, id: u32) -> String {
    format!(
        "{{\"ph\": \"s\", \"tid\": 1, \"pid\": 1, \"name\": \"dep\", \"cat\": \"Flow_H2D_{id}_0\", \"ts\": {}, \"id\": {id}}}",
        ts(start)
    )
}

/// A rank with two GPUs: GPU #0 runs 0-100 and 150-200 us, GPU #1 50-200
/// us; the host launches three kernels and waits in a sync 0-250 us.
#[test]
fn a_rank_with_two_devices_gets_a_row_per_device_in_each_per_rank_table() {
    let dir = tempfile::tempdir().unwrap();
    let (d0, d1) = (4294967295u64, 4294967294u64);
    let events = vec![
        meta("process_name", 1, None, "RANK 0 HOST<n>"),
        meta("process_name", d0, None, "RANK 0 DEVICE<n>[GPU] 0:0:0:0 #0"),
        meta("process_name", d1, None, "RANK 0 DEVICE<n>[GPU] 0:1:0:0 #1"),
        kernel(d0, "gemm", 0.0, 100.0, 1),
        kernel(d0, "gemm", 150.0, 50.0, 2),
        kernel(d1, "gemm", 50.0, 150.0, 3),
        host("zeCommandListAppendLaunchKernel", 0.0, 1.0),
        flow(0.0, 1),
        host("zeCommandListAppendLaunchKernel", 5.0, 1.0),
        flow(5.0, 3),
        host("zeCommandListAppendLaunchKernel", 10.0, 1.0),
        flow(10.0, 2),
        host("zeEventHostSynchronize", 11.0, 239.0),
    ];
    let path = trace_file(dir.path(), "two.10.0.json", &events);
    let (doc, stdout, stderr) = report(&[path], &["--short-kernel", "60us"]);
    assert!(stderr.is_empty(), "{stderr}");
    let b = doc["breakdown"].as_array().unwrap();
    let devices: Vec<&str> = b.iter().map(|r| r["device"].as_str().unwrap()).collect();
    assert_eq!(
        devices,
        [
            "all",
            "DEVICE<n>[GPU] 0:0:0:0 #0",
            "DEVICE<n>[GPU] 0:1:0:0 #1"
        ]
    );
    // Wall 0-250 us for every row; busy: union 200, GPU #0 150, GPU #1 150.
    for (row, busy, kernels) in [
        (&b[0], 200.0, 300.0),
        (&b[1], 150.0, 150.0),
        (&b[2], 150.0, 150.0),
    ] {
        close(f(&row["wall_us"]), 250.0, "wall");
        close(f(&row["busy_us"]), busy, "busy");
        close(f(&row["compute_us"]), busy, "compute");
        close(f(&row["idle_us"]), 250.0 - busy, "idle");
        close(f(&row["kernel_time_us"]), kernels, "kernel sum");
    }
    assert_eq!(b[1]["launches"], 2);
    assert_eq!(b[2]["launches"], 1);
    // GPU #0 idles 100-150 us while GPU #1 runs: a gap of the device only,
    // the host in its sync meanwhile.
    let g = doc["idle_gaps"].as_array().unwrap();
    assert_eq!(g[0]["count"], 0);
    assert_eq!(g[1]["count"], 1);
    close(f(&g[1]["total_us"]), 50.0, "device gap");
    assert_eq!(g[1]["causes"][1][0], "sync");
    assert_eq!(g[1]["causes"][1][1], 1);
    close(f(&g[1]["causes"][1][2]), 50.0, "sync time");
    assert_eq!(g[2]["count"], 0);
    // Launches per device: latencies GPU #0 0 and 140 us, GPU #1 45 us;
    // the 50 us kernel of GPU #0 is short (< 60 us).
    let l = doc["launches"].as_array().unwrap();
    let per: Vec<(&str, u64, u64)> = l
        .iter()
        .map(|r| {
            (
                r["device"].as_str().unwrap(),
                r["kernels"].as_u64().unwrap(),
                r["short_kernels"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        per,
        [
            ("all", 3, 1),
            ("DEVICE<n>[GPU] 0:0:0:0 #0", 2, 1),
            ("DEVICE<n>[GPU] 0:1:0:0 #1", 1, 0)
        ]
    );
    close(f(&l[1]["latency_max_us"]), 140.0, "GPU #0 max latency");
    close(f(&l[1]["latency_mean_us"]), 70.0, "GPU #0 mean latency");
    close(f(&l[2]["latency_mean_us"]), 45.0, "GPU #1 latency");
    close(f(&l[0]["latency_mean_us"]), 185.0 / 3.0, "rank latency");
    // The console has the device rows in the breakdown and the launches.
    for section in ["Where the time went", "Kernel launches"] {
        let text: String = stdout
            .split("\n\n")
            .find(|s| s.starts_with(section))
            .unwrap()
            .to_string();
        assert!(text.contains("DEVICE<n>[GPU] 0:1:0:0 #1"), "{text}");
    }
}

/// `end before start` (an `E` without its `B`, or before it) and `time out
/// of range` (a timestamp no `i64` of nanoseconds holds): counted, left
/// out, named in the one warning line.
#[test]
fn end_before_start_and_time_out_of_range_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let e = |t: f64| {
        format!(
            "{{\"ph\": \"E\", \"tid\": 1, \"pid\": 1, \"name\": \"PyTorch::op\", \"cat\": \"cpu_op\", \"ts\": {}}}",
            ts(t)
        )
    };
    let b = |t: f64| {
        format!(
            "{{\"ph\": \"B\", \"tid\": 1, \"pid\": 1, \"name\": \"PyTorch::op\", \"cat\": \"cpu_op\", \"ts\": {}}}",
            ts(t)
        )
    };
    let events = vec![
        kernel(9, "k", 10.0, 10.0, 1),
        host("zeCommandListAppendLaunchKernel", 0.0, 5.0),
        flow(0.0, 1),
        e(1.0),
        b(50.0),
        e(40.0),
        "{\"ph\": \"X\", \"tid\": 9, \"pid\": 9, \"name\": \"far\", \"cat\": \"gpu_op\", \"ts\": 123456789012345678901234567890.0, \"dur\": 1.0, \"args\": {\"id\": \"2\"}}".to_string(),
        b(60.0),
        e(70.0),
    ];
    let path = trace_file(dir.path(), "odd.20.0.json", &events);
    let (doc, _, stderr) = report(&[path], &[]);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with(
            "tracestat: warning: 3 implausible events left out (2 end before start, 1 time out of range); e.g. "
        ),
        "{stderr}"
    );
    assert_eq!(lines[0].matches("odd.20.0.json").count(), 3, "{stderr}");
    let kinds: Vec<(&str, u64)> = doc["implausible"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["kind"].as_str().unwrap(), i["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(kinds, [("end before start", 2), ("time out of range", 1)]);
    // What is left: the kernel 10-20 us, the launch, one PyTorch::op
    // 60-70 us (the B at 50 was closed by the E at 40: left out).
    let b = &doc["breakdown"][0];
    close(f(&b["wall_us"]), 70.0, "wall");
    close(f(&b["busy_us"]), 10.0, "busy");
    assert_eq!(b["launches"], 1);
    let op = row(&doc, "host_ranges", "name", "PyTorch::op");
    assert_eq!(op["calls"], 1);
    close(f(&op["host_us"]), 10.0, "the one plausible range");
}

/// `--schema` against the built-in classification on one timeline: a
/// oneCCL call (0-100 us) launches `gemm_kernel` (20-60 us); then
/// `mystery` (120-150), `Allreduce_small_kernel` (160-200) and a copy
/// (210-230) are launched outside it. Built-in: what a collective launches
/// is communication. With testdata/trace/categories/schema.json the
/// schema's category decides (gemm: compute), and unmatched kernels keep
/// the category `device` with the built-in class.
#[test]
fn schema_classes_against_the_builtin_classification() {
    let dir = tempfile::tempdir().unwrap();
    let d = 4294967295u64;
    let events = vec![
        kernel(d, "gemm_kernel[SIMD8 {4; 1; 1} {128; 1; 1}]", 20.0, 40.0, 1),
        kernel(d, "mystery", 120.0, 30.0, 2),
        kernel(d, "Allreduce_small_kernel", 160.0, 40.0, 3),
        kernel(
            d,
            "zeCommandListAppendMemoryCopy(M2D)[4096]",
            210.0,
            20.0,
            4,
        ),
        host("zeCommandListAppendLaunchKernel", 10.0, 1.0),
        flow(10.0, 1),
        host("oneCCL::API::ALLREDUCE_SMALL", 0.0, 100.0),
        host("zeCommandListAppendLaunchKernel", 110.0, 1.0),
        flow(110.0, 2),
        host("zeCommandListAppendLaunchKernel", 150.0, 1.0),
        flow(150.0, 3),
        host("zeCommandListAppendMemoryCopy", 200.0, 1.0),
        flow(200.0, 4),
    ];
    let path = trace_file(dir.path(), "schema.30.0.json", &events);
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trace/categories/schema.json");
    let (builtin, _, _) = report(std::slice::from_ref(&path), &[]);
    let (with, _, _) = report(&[path], &["--schema", schema.to_str().unwrap()]);
    let classes = |doc: &Value| {
        let b = &doc["breakdown"][0];
        [
            f(&b["compute_us"]),
            f(&b["communication_us"]),
            f(&b["memory_us"]),
            f(&b["idle_us"]),
        ]
    };
    assert_eq!(classes(&builtin), [30.0, 80.0, 20.0, 100.0]);
    assert_eq!(classes(&with), [70.0, 40.0, 20.0, 100.0]);
    let cats = |doc: &Value| {
        let mut v: Vec<(String, String, f64)> = doc["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["category"].as_str().unwrap().to_string(),
                    c["class"].as_str().unwrap().to_string(),
                    f(&c["total_us"]),
                )
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let c = |a: &str, b: &str, t: f64| (a.to_string(), b.to_string(), t);
    assert_eq!(
        cats(&builtin),
        [
            c("communication", "communication", 80.0),
            c("compute", "compute", 30.0),
            c("memory", "memory", 20.0)
        ]
    );
    assert_eq!(
        cats(&with),
        [
            c("allreduce", "communication", 40.0),
            c("copy", "memory", 20.0),
            c("device", "compute", 30.0),
            c("gemm", "compute", 40.0)
        ]
    );
    // The kernel table names the schema category of each kernel.
    assert_eq!(
        row(&with, "kernels", "name", "gemm_kernel")["category"],
        "gemm"
    );
    assert_eq!(
        row(&builtin, "kernels", "name", "gemm_kernel")["category"],
        "communication"
    );
    // Overlap is unchanged by categories here (no two kernels overlap).
    close(f(&with["breakdown"][0]["overlap_us"]), 0.0, "overlap");
}

/// A collective written as a `B`/`E` pair (the trace writer supports it;
/// `unitrace-gen trace --ranges be` writes host ranges so) is matched
/// across ranks like its `X` form, its size taken from the arguments of
/// either event: rank 0 enters at 100 us, rank 1 at 400 us, both leave at
/// 600 us, 4096 bytes.
#[test]
fn collectives_written_as_begin_end_pairs_are_matched() {
    let dir = tempfile::tempdir().unwrap();
    let ev = |ph: &str, t: f64, args: &str| {
        format!(
            "{{\"ph\": \"{ph}\", \"tid\": 1, \"pid\": 1, \"name\": \"oneCCL::API::ALLREDUCE_SMALL\", \"cat\": \"cpu_op\", \"ts\": {}{args}}}",
            ts(t)
        )
    };
    let sized = ", \"args\": {\"send_size\":[4096]}";
    let files = [
        trace_file(
            dir.path(),
            "be.40.0.json",
            &[
                host("zeInit", 0.0, 10.0),
                ev("B", 100.0, sized),
                ev("E", 600.0, ", \"id\": 0"),
            ],
        ),
        trace_file(
            dir.path(),
            "be.41.1.json",
            &[
                host("zeInit", 0.0, 10.0),
                ev("B", 400.0, ", \"id\": 0"),
                ev("E", 600.0, sized),
            ],
        ),
    ];
    let (doc, _, stderr) = report(&files, &[]);
    assert!(stderr.is_empty(), "{stderr}");
    let c = doc["collectives"].as_array().unwrap();
    assert_eq!(c.len(), 1, "{c:?}");
    let c = &c[0];
    assert_eq!(c["ranks"], 2);
    assert_eq!(c["bytes"], 4096);
    close(f(&c["skew_us"]), 300.0, "skew");
    assert_eq!(c["last_rank"], "1");
    close(f(&c["transfer_us"]), 200.0, "transfer");
    // 4096 B x 2(n-1)/n over 200 us.
    close(f(&c["bus_gbps"]), 4096.0 / 200_000.0, "bus bandwidth");
    assert_eq!(doc["straggler"]["rank"], "1");
    let h = row(&doc, "host_ranges", "name", "oneCCL::API::ALLREDUCE_SMALL");
    assert_eq!(h["calls"], 2);
    close(f(&h["host_us"]), 500.0 + 200.0, "host time of both ranks");
}

/// A trace of `events` written as `dir/app.1.0.json` (rank 0).
fn app_trace(dir: &Path, events: &[impl AsRef<str>]) -> PathBuf {
    let file = dir.join("app.1.0.json");
    let body: Vec<&str> = events.iter().map(|e| e.as_ref()).collect();
    let text = format!("{{\"traceEvents\":[\n{}\n]}}\n", body.join(",\n"));
    std::fs::write(&file, text).unwrap();
    file
}

/// The report's implausible events as `(kind, count)`, in its order.
fn implausible_kinds(doc: &serde_json::Value) -> Vec<(String, u64)> {
    doc["implausible"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["kind"].as_str().unwrap().to_string(),
                i["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Events a reader cannot place (no `ph`, no number `ts`, a slice without
/// a name, a host slice without a thread) are left out and said so, by
/// kind, never dropped in silence; Kineto's negative thread ids are threads
/// (docs/tracestat.md#implausible-events).
#[test]
fn events_without_phase_time_name_or_thread_are_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let events = [
        r#"{"ph": "X", "tid": 9, "pid": 9, "name": "good", "cat": "gpu_op", "ts": 100.0, "dur": 10.0}"#,
        r#"{"tid": 9, "pid": 9, "name": "no_ph", "cat": "gpu_op", "ts": 120.0, "dur": 10.0}"#,
        r#"{"ph": 7, "tid": 9, "pid": 9, "name": "ph_number", "cat": "gpu_op", "ts": 140.0, "dur": 10.0}"#,
        r#"{"ph": "X", "tid": 9, "pid": 9, "name": "ts_text", "cat": "gpu_op", "ts": "160", "dur": 10.0}"#,
        r#"{"ph": "X", "tid": 9, "pid": 9, "name": "no_ts", "cat": "gpu_op", "dur": 10.0}"#,
        r#"{"ph": "X", "tid": 9, "pid": 9, "name": null, "cat": "gpu_op", "ts": 180.0, "dur": 10.0}"#,
        r#"{"ph": "X", "tid": 1, "pid": 1, "cat": "cpu_op", "ts": 0.0, "dur": 50.0}"#,
        r#"{"ph": "B", "tid": 1, "pid": 1, "cat": "cpu_op", "ts": 60.0}"#,
        r#"{"ph": "X", "tid": "main", "pid": 1, "name": "tid_text", "cat": "cpu_op", "ts": 0.0, "dur": 50.0}"#,
        r#"{"ph": "X", "tid": -549452224, "pid": 1, "name": "negative_tid", "cat": "cpu_op", "ts": 0.0, "dur": 300.0}"#,
    ];
    let file = app_trace(dir.path(), &events);
    let (doc, _, stderr) = report(std::slice::from_ref(&file), &[]);
    let mut kinds = implausible_kinds(&doc);
    kinds.sort();
    let want = [
        ("no name", 3),
        ("no phase", 2),
        ("no thread", 1),
        ("no timestamp", 2),
    ];
    let want: Vec<(String, u64)> = want.iter().map(|(k, n)| (k.to_string(), *n)).collect();
    assert_eq!(kinds, want);
    assert!(stderr.contains("8 implausible events left out"), "{stderr}");
    assert!(
        stderr.contains("event 1 (no_ph): no ph (a string)"),
        "{stderr}"
    );
    // One kernel kept (100-110 us); the call on the negative thread id is
    // read, so the wall runs from its start to its end, 0-300 us (without
    // it: the kernel's 10 us).
    assert_eq!(doc["launches"][0]["kernels"], 1);
    let b = &doc["breakdown"][0];
    close(
        f(&b["wall_us"]),
        300.0,
        "wall, through the negative thread's call",
    );
    close(f(&b["busy_us"]), 10.0, "the one kernel");
}

/// A device command whose `dur` is missing or no number is left out as
/// `no duration`, not as a command of 0 ns, which the trace does not say
/// (docs/tracestat.md#implausible-events).
#[test]
fn a_device_command_without_a_usable_duration_is_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let gpu = |name: &str, dur: &str| {
        format!(
            r#"{{"ph": "X", "tid": 9, "pid": 9, "name": "{name}", "cat": "gpu_op", "ts": 200.0{dur}}}"#
        )
    };
    let events = [
        r#"{"ph": "X", "tid": 1, "pid": 1, "name": "host", "cat": "cpu_op", "ts": 0.0, "dur": 1000.0}"#
            .to_string(),
        gpu("good", r#", "dur": 10.0"#),
        gpu("text", r#", "dur": "12.5""#),
        gpu("null", r#", "dur": null"#),
        gpu("none", ""),
        gpu("zero", r#", "dur": 0.0"#),
    ];
    let file = app_trace(dir.path(), &events);
    let (doc, _, stderr) = report(std::slice::from_ref(&file), &[]);
    let kinds = implausible_kinds(&doc);
    assert_eq!(
        kinds,
        [
            ("no duration".to_string(), 3),
            ("zero-length kernel".to_string(), 1)
        ]
    );
    assert!(
        stderr.contains("(3 no duration, 1 zero-length kernel)")
            || stderr.contains("(1 zero-length kernel, 3 no duration)"),
        "{stderr}"
    );
    assert_eq!(doc["launches"][0]["kernels"], 1);
}

/// Without `--jobs`, files are read fewer at a time than the cores when
/// that many would not fit in half the available memory, with one warning
/// saying so; the report is the one of any other number of jobs
/// (docs/tracestat.md#scale). `UNITRACE_TEST_MEM_AVAILABLE` stands for the
/// system's available memory.
#[test]
fn files_read_at_once_are_capped_by_the_available_memory() {
    let dir = tempfile::tempdir().unwrap();
    let recorded = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded/clean");
    let files: Vec<PathBuf> = (0..4)
        .map(|r| recorded.join(format!("rank{r}.pt.trace.json.gz")))
        .collect();
    let run_with = |extra: &[&str], memory: Option<&str>, out: &str| {
        let json = dir.path().join(out);
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_tracestat"));
        cmd.args(&files).arg("--json").arg(&json).args(extra);
        if let Some(m) = memory {
            cmd.env("UNITRACE_TEST_MEM_AVAILABLE", m);
        }
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (
            std::fs::read(json).unwrap(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (capped, stderr) = run_with(&["-q"], Some("1"), "capped.json");
    if cores > 1 {
        assert!(
            stderr.starts_with(&format!(
                "tracestat: warning: reading 1 files at a time, not one per core ({cores}): "
            )),
            "{stderr}"
        );
    } else {
        assert_eq!(stderr, "");
    }
    let (one, stderr) = run_with(&["-q", "--jobs", "1"], Some("1"), "one.json");
    assert_eq!(stderr, "", "--jobs given: no cap, no warning");
    let (plenty, stderr) = run_with(&["-q"], Some("1000000000000"), "plenty.json");
    assert_eq!(stderr, "");
    assert!(capped == one && one == plenty, "the same report");
}
