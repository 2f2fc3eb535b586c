use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/compare")
        .join(name)
}

fn compare(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_compare"))
        .args(args)
        .output()
        .expect("run compare")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs with `--json` into a temp dir and returns (output, document).
fn json_of(args: &[&str]) -> (Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.json");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", s(&out), "-q"]);
    let o = compare(&all);
    let doc =
        serde_json::from_slice(&std::fs::read(&out).unwrap_or_default()).unwrap_or(Value::Null);
    (o, doc)
}

fn row<'a>(doc: &'a Value, section: &str, name: &str) -> &'a Value {
    doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["section"] == section)
        .unwrap_or_else(|| panic!("no section {section}"))["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {section}/{name}"))
}

fn close(v: &Value, want: f64) {
    let got = v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"));
    assert!((got - want).abs() < 1e-9, "{got} != {want}");
}

#[test]
fn traces_every_delta() {
    let (o, doc) = json_of(&[s(&data("base")), s(&data("cand"))]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(doc["kind"], "traces");
    assert_eq!(doc["match"], "shape");
    close(&doc["baseline_total_us"], 1020.0);
    close(&doc["candidate_total_us"], 1140.0);
    // gemm made 20% slower on both ranks.
    let gemm = row(&doc, "kernel", "gemm");
    assert_eq!(gemm["status"], "exact");
    close(&gemm["baseline_us"], 630.0);
    close(&gemm["candidate_us"], 756.0);
    close(&gemm["delta_us"], 126.0);
    close(&gemm["ratio"], 1.2);
    close(&gemm["change_pct"], 20.0);
    close(&gemm["share_of_change_pct"], 105.0);
    // One run per side: no noise; +20% and +126 us pass 5% and 10 us.
    assert_eq!(gemm["significant"], true);
    assert_eq!(gemm["noise_us"], Value::Null);
    assert_eq!(gemm["baseline_sd_us"], Value::Null);
    // norm: +8% but only +4 us (below the absolute threshold).
    let norm = row(&doc, "kernel", "norm");
    close(&norm["delta_us"], 4.0);
    assert_eq!(norm["significant"], false);
    // Renamed template arguments do not match at the default level.
    assert_eq!(row(&doc, "kernel", "relu<float>")["status"], "vanished");
    assert_eq!(row(&doc, "kernel", "relu<half>")["status"], "new");
    let old = row(&doc, "kernel", "old_kernel");
    assert_eq!(old["status"], "vanished");
    close(&old["delta_us"], -60.0);
    close(&row(&doc, "kernel", "new_kernel")["candidate_us"], 50.0);
    close(&row(&doc, "kernel", "softmax")["delta_us"], 0.0);
    // Sorted by absolute change.
    let names: Vec<&str> = doc["sections"][1]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "relu<float>",
            "relu<half>",
            "gemm",
            "old_kernel",
            "new_kernel",
            "norm",
            "softmax"
        ]
    );
    let sec = &doc["sections"][1];
    assert_eq!(
        (
            sec["matched"].as_u64(),
            sec["new"].as_u64(),
            sec["vanished"].as_u64()
        ),
        (Some(3), Some(2), Some(2))
    );
    // Per rank compute time: rank 1 gains 3 x 22 - 5 (old 30 -> new 25)
    // + 2, rank 0 3 x 20 - 5 + 2; no communication, so no such row.
    let r1 = row(&doc, "rank", "rank 1 compute");
    close(&r1["delta_us"], 63.0);
    let r0 = row(&doc, "rank", "rank 0 compute");
    close(&r0["delta_us"], 57.0);
    assert_eq!(doc["sections"][4]["section"], "rank");
    assert_eq!(doc["sections"][4]["rows"].as_array().unwrap().len(), 2);
    close(&row(&doc, "category", "compute")["delta_us"], 120.0);
}

#[test]
fn template_level_pairs_renamed_kernels() {
    let (o, doc) = json_of(&[s(&data("base")), s(&data("cand")), "--match", "template"]);
    assert!(o.status.success());
    let relu = row(&doc, "kernel", "relu<half>");
    assert_eq!(relu["status"], "template");
    assert_eq!(relu["baseline_name"], "relu<float>");
    close(&relu["delta_us"], 0.0);
    assert_eq!(doc["sections"][1]["matched"], 4);
}

#[test]
fn console_names_new_and_vanished() {
    let o = compare(&[s(&data("base")), s(&data("cand"))]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains(
        "kernel: 3 matched, 2 new (relu<half> 200.000 us, new_kernel 50.000 us), 2 vanished (relu<float> 200.000 us, old_kernel 60.000 us)"
    ), "{out}");
    assert!(
        out.contains(
            "total (kernel time, all ranks): 1.020 ms -> 1.140 ms (+120.000 us, +11.8%), significant"
        ),
        "{out}"
    );
    // One unit per time column, named in the header; norm is not significant.
    assert!(out.contains("name         baseline_us  candidate_us  delta_us  change_%  ratio  share_%  significant  note"), "{out}");
    assert!(
        out.contains(
            "norm              50.000        54.000    +4.000      +8.0  1.080      3.3  no"
        ),
        "{out}"
    );
}

#[test]
fn summary_json_deltas() {
    let (o, doc) = json_of(&[s(&data("base.summary.json")), s(&data("cand.summary.json"))]);
    assert!(o.status.success());
    assert_eq!(doc["kind"], "summary JSON");
    close(&doc["baseline_total_us"], 6000.0);
    close(&doc["candidate_total_us"], 6500.0);
    let ar = row(&doc, "category", "allreduce");
    close(&ar["delta_us"], 150.0);
    close(&ar["change_pct"], 15.0);
    close(&ar["metrics"][0][1], 40.0);
    assert_eq!(row(&doc, "category", "attn")["status"], "new");
    close(&row(&doc, "category", "norm")["change_pct"], -5.0);
    // wallclock and total are not categories.
    let rows = doc["sections"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
}

#[test]
fn metric_csv_drops_invalid_reports_and_matches_shapes() {
    let (o, doc) = json_of(&[s(&data("base.metrics.csv")), s(&data("cand.metrics.csv"))]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let gemm = row(&doc, "kernel", "gemm[SIMD16 {8192; 1; 1} {128; 1; 1}]");
    assert_eq!(gemm["status"], "shape");
    assert_eq!(
        gemm["baseline_name"],
        "gemm[SIMD32 {4096; 1; 1} {256; 1; 1}]"
    );
    // The OverrunOccured instance (5 ms) is dropped: 900 + 1000 + 1100 ns.
    close(&gemm["candidate_us"], 3.0);
    close(&gemm["baseline_us"], 3.6);
    let m = |name: &str| -> (f64, f64) {
        let v = gemm["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m[0] == name)
            .unwrap();
        (v[1].as_f64().unwrap(), v[2].as_f64().unwrap())
    };
    assert_eq!(m("instances"), (3.0, 3.0));
    assert_eq!(m("XVE_ACTIVE[%].mean"), (60.0, 65.0));
    assert_eq!(m("XVE_ACTIVE[%].median"), (60.0, 65.0));
    assert_eq!(m("XVE_ACTIVE[%].max"), (70.0, 75.0));
    assert_eq!(m("GpuTime[ns].max"), (1400.0, 1100.0));
    // -0.6 us: under the 10 us threshold (the spread between instances
    // of one run is no noise, docs/compare.md#significance).
    assert_eq!(gemm["significant"], false);
    // The ReportError relu instance (900 us) is dropped.
    close(&row(&doc, "kernel", "relu")["baseline_us"], 0.2);

    let (_, exact) = json_of(&[
        s(&data("base.metrics.csv")),
        s(&data("cand.metrics.csv")),
        "--match",
        "exact",
    ]);
    assert_eq!(exact["sections"][0]["new"], 1);
    assert_eq!(exact["sections"][0]["vanished"], 1);
}

#[test]
fn two_instances_of_one_file() {
    let k = "gemm[SIMD32 {4096; 1; 1} {256; 1; 1}]";
    let (a, b) = (format!("{k}:1"), format!("{k}:3"));
    let (o, doc) = json_of(&[s(&data("base.metrics.csv")), "--instances", &a, &b]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r = &doc["sections"][0]["rows"][0];
    close(&r["baseline_us"], 1.0);
    close(&r["candidate_us"], 1.4);
    let x = r["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m[0] == "XVE_ACTIVE[%]")
        .unwrap();
    assert_eq!((x[1].as_f64(), x[2].as_f64()), (Some(50.0), Some(70.0)));
    let o = compare(&[
        s(&data("base.metrics.csv")),
        "--instances",
        &format!("{k}:9"),
        &b,
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no valid instance 9"));
}

fn gate(rules: &[&str]) -> Output {
    let mut args = vec![
        s(&data("base")).to_string(),
        s(&data("cand")).to_string(),
        "-q".into(),
    ];
    for r in rules {
        args.push("--fail-if".into());
        args.push(r.to_string());
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    compare(&refs)
}

#[test]
fn gate_passes_with_exit_0() {
    let o = gate(&[
        "total>+20%",
        "kernel:gemm*>+25%",
        "kernel:norm>+10us",
        "category:compute>+12%",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stderr.is_empty());
}

#[test]
fn gate_violations_exit_3_one_line_each() {
    let o = gate(&[
        "total>+2%",
        "kernel:gemm*>+5%",
        "category:compute>+10%",
        "kernel:gemm>+100us",
        "rank:*@pct_of_wall<-50pt",
    ]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8(o.stderr).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    assert_eq!(lines[0], "compare: total (kernel time, all ranks): 1.020 ms -> 1.140 ms (+11.76%) breaks 'total>+2%'");
    assert_eq!(lines[1], "compare: kernel gemm [exact]: 630.000 us -> 756.000 us (+20.00%) breaks 'kernel:gemm*>+5%'");
    assert_eq!(lines[2], "compare: category compute [exact]: 1.020 ms -> 1.140 ms (+11.76%) breaks 'category:compute>+10%'");
    assert_eq!(lines[3], "compare: kernel gemm [exact]: 630.000 us -> 756.000 us (+126.000 us) breaks 'kernel:gemm>+100us'");
}

#[test]
fn gate_new_kernel_counts_as_growth() {
    let o = gate(&["kernel:new_*>+50%"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("new_kernel [new]"));
    // A selector that matches nothing warns but does not fail.
    let o = gate(&["kernel:nothing*>+1%"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("warning: --fail-if 'kernel:nothing*>+1%': no kernel item matches"));
}

#[test]
fn gate_on_a_metric_column() {
    let base = data("base.metrics.csv");
    let cand = data("cand.metrics.csv");
    let o = compare(&[
        s(&base),
        s(&cand),
        "-q",
        "--fail-if",
        "kernel:gemm*@XVE_ACTIVE[%].mean>+4pt",
    ]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("XVE_ACTIVE[%].mean: 60 -> 65 (+5) breaks"),
        "{err}"
    );
    let o = compare(&[
        s(&base),
        s(&cand),
        "-q",
        "--fail-if",
        "kernel:gemm*@XVE_ACTIVE[%].mean>+10%",
    ]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn usage_errors_exit_2() {
    let o = gate(&["gemm>5%"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1);
    assert!(err.starts_with("compare: --fail-if 'gemm>5%': expected"));
    assert_eq!(compare(&[]).status.code(), Some(2));
    assert_eq!(
        compare(&["a", "b", "--match", "fuzzy"]).status.code(),
        Some(2)
    );
}

#[test]
fn mixing_kinds_is_one_line_error_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.csv");
    let o = compare(&[
        s(&data("base.summary.json")),
        s(&data("cand.metrics.csv")),
        "--csv",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1);
    // Both names fit their kinds: the baseline is named first
    // (docs/compare.md#inputs).
    assert_eq!(
        err,
        format!(
            "compare: {}: summary JSON against a metric CSV candidate ({}); compare two of one kind\n",
            s(&data("base.summary.json")),
            s(&data("cand.metrics.csv"))
        )
    );
    assert!(!out.exists());
    let o = compare(&[s(&data("base")), "/nonexistent/x.json"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.starts_with("compare: /nonexistent/x.json: "), "{err}");
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn bad_content_is_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"a_time\": \"x\"}").unwrap();
    let o = compare(&[s(&bad), s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1);
    assert!(err.contains("'a_time' is not a number"), "{err}");
    let out = dir.path().join("out.json");
    // An output naming an input is refused.
    let o = compare(&[s(&bad), s(&bad), "--json", s(&bad)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!out.exists());
}

#[test]
fn outputs_are_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let run = |tag: &str| -> Vec<Vec<u8>> {
        let files: Vec<PathBuf> = ["csv", "json", "md"]
            .iter()
            .map(|e| dir.path().join(format!("{tag}.{e}")))
            .collect();
        let o = compare(&[
            s(&data("base")),
            s(&data("cand")),
            "-q",
            "--fail-if",
            "total>+2%",
            "--csv",
            s(&files[0]),
            "--json",
            s(&files[1]),
            "--markdown",
            s(&files[2]),
        ]);
        assert_eq!(o.status.code(), Some(3));
        files.iter().map(|f| std::fs::read(f).unwrap()).collect()
    };
    let a = run("a");
    assert_eq!(a, run("b"));
    let md = String::from_utf8(a[2].clone()).unwrap();
    assert!(md.contains("Gate: :x: 1 threshold(s) exceeded"), "{md}");
    assert!(
        md.contains("| gemm | 630.000 | 756.000 | +126.000 | +20.0 | 1.200 | 105.0 |  |"),
        "{md}"
    );
    assert!(md.contains("relu&lt;float>"), "{md}");
    let csv = String::from_utf8(a[0].clone()).unwrap();
    assert!(
        csv.contains("kernel,gemm,,exact,time_us,630,756,126,1.2,20,105,,,,,true"),
        "{csv}"
    );
    assert!(
        csv.contains("kernel,norm,,exact,time_us,50,54,4,1.08,8,3.3333333333333335,,,,,false"),
        "{csv}"
    );
    let json: Value = serde_json::from_slice(&a[1]).unwrap();
    assert_eq!(json["violations"].as_array().unwrap().len(), 1);
}

#[test]
fn summary_tarballs_per_kernel() {
    let (o, doc) = json_of(&[
        s(&data("base.summaries.tgz")),
        s(&data("cand.summaries.tgz")),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(doc["kind"], "summary tarball");
    let hgemm = "xpu::xetla::hgemm_caller<sycl::_V1::detail::half_impl::half, 32, 64, 8, 512, 8, 4, 1, 1, 3, true>";
    let r = row(&doc, "kernel", hgemm);
    close(&r["delta_us"], 1000.0);
    close(&r["metrics"][0][1], r["metrics"][0][2].as_f64().unwrap());
    // +1000 us on 3 processes' kernel time: beyond 10 us, but under 5%.
    let pct = r["change_pct"].as_f64().unwrap();
    assert!(pct > 0.0 && pct < 5.0, "{pct}");
    assert_eq!(r["significant"], false);
    let old = "at::AtenIpexTypeXPU::impl::ArgMaxKernel<c10::Half, long>";
    let new = "at::AtenIpexTypeXPU::impl::ArgMaxKernel<c10::Half, int>";
    assert_eq!(row(&doc, "kernel", old)["status"], "vanished");
    assert_eq!(row(&doc, "kernel", new)["status"], "new");
    close(
        &(doc["candidate_total_us"].as_f64().unwrap() - doc["baseline_total_us"].as_f64().unwrap())
            .into(),
        1000.0,
    );
    for r in doc["sections"][1]["rows"].as_array().unwrap() {
        close(&r["delta_us"], 0.0);
    }
    let (_, t) = json_of(&[
        s(&data("base.summaries.tgz")),
        s(&data("cand.summaries.tgz")),
        "--match",
        "template",
    ]);
    let r = row(&t, "kernel", new);
    assert_eq!(r["status"], "template");
    assert_eq!(r["baseline_name"], old);
    close(&r["delta_us"], 0.0);
}

/// Every row of every section unchanged.
fn assert_all_zero(doc: &Value) {
    let mut rows = 0;
    for sec in doc["sections"].as_array().unwrap() {
        assert_eq!(sec["new"], 0, "{}", sec["section"]);
        assert_eq!(sec["vanished"], 0, "{}", sec["section"]);
        for r in sec["rows"].as_array().unwrap() {
            close(&r["delta_us"], 0.0);
            rows += 1;
        }
    }
    assert!(rows > 0);
    close(
        &doc["baseline_total_us"],
        doc["candidate_total_us"].as_f64().unwrap(),
    );
}

#[test]
fn json_and_pftrace_of_one_run_do_not_differ() {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/tracestat");
    let (o, doc) = json_of(&[s(&gen.join("gen")), s(&gen.join("gen-pftrace"))]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_all_zero(&doc);
    // Ranks: compute, communication and memory of each of 3.
    for (section, n) in [
        ("kernel", 42),
        ("host_range", 13),
        ("rank", 9),
        ("collective", 1),
    ] {
        let sec = doc["sections"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["section"] == section)
            .unwrap();
        assert_eq!(sec["matched"], n, "{section}");
    }
}

#[test]
fn result_dir_tree_against_trace_directory() {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/tracestat/gen");
    let tree = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&gen).unwrap() {
        let p = entry.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        // python.<pid>.<rank>.json -> rank_<rank>.python.<pid>/chrome_trace.json
        let parts: Vec<&str> = name.split('.').collect();
        let folder = tree
            .path()
            .join(format!("rank_{}.python.{}", parts[2], parts[1]));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(&p, folder.join("chrome_trace.json")).unwrap();
    }
    let (o, doc) = json_of(&[s(&gen), s(tree.path())]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_all_zero(&doc);
}

#[test]
fn merged_trace_against_itself() {
    let merged = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/tracestat/merged.json");
    let (o, doc) = json_of(&[s(&merged), s(&merged)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_all_zero(&doc);
    let ranks = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["section"] == "rank")
        .unwrap();
    assert!(ranks["matched"].as_u64().unwrap() >= 2);
}

#[test]
fn empty_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = compare(&[s(dir.path()), s(&data("base"))]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1);
    assert!(
        err.contains("no trace in this directory (*.json, *.json.gz, *.pftrace, *.pftrace.gz)"),
        "{err}"
    );
}

#[test]
fn html_page_has_bars_per_section() {
    let dir = tempfile::tempdir().unwrap();
    let page = |name: &str| -> String {
        let out = dir.path().join(name);
        let o = compare(&[
            s(&data("base")),
            s(&data("cand")),
            "-q",
            "--html",
            s(&out),
            "--fail-if",
            "kernel:gemm>+5%",
        ]);
        assert_eq!(o.status.code(), Some(3));
        std::fs::read_to_string(&out).unwrap()
    };
    let html = page("a.html");
    assert_eq!(html, page("b.html"));
    // category, kernel and rank have rows; host_range and collective none.
    assert_eq!(html.matches("<svg").count(), 3);
    assert!(html.contains("Gate: 1 threshold(s) exceeded:"));
    assert!(html.contains("relu&lt;float&gt;"));
    assert!(!html.contains("relu<float>"));
    assert!(!html.contains("<script"));
}

#[test]
fn roofline_profile_pairs() {
    let r = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/roofline");
    let device = r.join("PVC_1tile.csv");
    let pair = |tag: &str| {
        format!(
            "{},{}",
            s(&r.join(format!("{tag}_compute.txt"))),
            s(&r.join(format!("{tag}_memory.txt")))
        )
    };
    let (o, same) = json_of(&[
        "--roofline",
        s(&device),
        &pair("gen_fp16"),
        &pair("gen_fp16"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(same["kind"], "roofline profiles");
    assert_all_zero(&same);
    let (o, doc) = json_of(&[
        "--roofline",
        s(&device),
        &pair("gen_fp16"),
        &pair("gen_new"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let hgemm = "xpu::xetla::hgemm_caller<sycl::_V1::ext::oneapi::bfloat16, 256, 256, 32, 64, 32, 1, true, false>[SIMD_ANY {16; 16; 1} {8; 4; 1}]";
    let k = row(&doc, "kernel", hgemm);
    // Sums of GpuTime[ns] of its rows in the two memory profiles.
    close(&k["baseline_us"], 9192.721);
    close(&k["candidate_us"], 14059.449);
    let metric = |name: &str| {
        k["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m[0] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(metric("instances")[1], 2.0);
    assert_eq!(metric("instances")[2], 3.0);
    assert_eq!(metric("memory_bound")[1], 1.0);
    for m in ["gflops", "ai", "pct_of_roof", "time_pct"] {
        assert!(metric(m)[1].as_f64().unwrap() > 0.0, "{m}");
    }
    assert_eq!(doc["sections"][0]["new"], 2);
    // A side that is not a pair is a one-line error.
    let o = compare(&[
        "--roofline",
        s(&device),
        s(&r.join("gen_fp16_compute.txt")),
        &pair("gen_new"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("each side is COMPUTE,MEMORY"));
}

#[test]
fn cut_trace_is_a_warning_and_shows_as_vanished_work() {
    let gen = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/tracestat/gen");
    let dir = tempfile::tempdir().unwrap();
    let name = "python.100020.0.json";
    let bytes = std::fs::read(gen.join(name)).unwrap();
    std::fs::write(dir.path().join(name), &bytes[..60000]).unwrap();
    let (o, doc) = json_of(&[s(&gen), s(dir.path())]);
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("compare: warning: ") && err.contains("cut short"),
        "{err}"
    );
    // Only rank 0 is left, and it ran less (its cut collective kernels):
    // the other two ranks' compute, communication and memory rows vanished.
    let ranks = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["section"] == "rank")
        .unwrap();
    assert_eq!(ranks["vanished"], 6);
    assert!(
        row(&doc, "rank", "rank 0 communication")["delta_us"]
            .as_f64()
            .unwrap()
            < 0.0
    );
}

#[test]
fn instances_console_lists_metrics() {
    let k = "gemm[SIMD32 {4096; 1; 1} {256; 1; 1}]";
    let o = compare(&[
        s(&data("base.metrics.csv")),
        "--instances",
        &format!("{k}:1"),
        &format!("{k}:3"),
    ]);
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains(
            "XVE_ACTIVE[%]                50                70                20    +40.0%"
        ),
        "{out}"
    );
}

#[test]
fn straggler_rank_shows_in_rank_rows_and_gate() {
    let base = data("straggler/base");
    let cand = data("straggler/cand");
    let (o, doc) = json_of(&[s(&base), s(&cand)]);
    assert!(o.status.success());
    let r1 = row(&doc, "rank", "rank 1 compute");
    let (b1, c1) = (
        r1["baseline_us"].as_f64().unwrap(),
        r1["candidate_us"].as_f64().unwrap(),
    );
    assert!(((c1 / b1) - 1.45).abs() < 0.01, "{b1} -> {c1}");
    assert_eq!(r1["significant"], true);
    let r0 = row(&doc, "rank", "rank 0 compute");
    close(&r0["delta_us"], 0.0);
    assert_eq!(r0["significant"], false);
    let o = compare(&[s(&base), s(&cand), "-q", "--fail-if", "rank:* compute>+10%"]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("compare: rank rank 1 compute [exact]: "),
        "{err}"
    );
    let o = compare(&[s(&base), s(&cand), "-q", "--fail-if", "rank:* compute>+50%"]);
    assert_eq!(o.status.code(), Some(0));
}

/// `--html` of two roofline pairs: one arrow per matched kernel from its
/// baseline binding point to its candidate one, on the chart's axes; offline.
#[test]
fn roofline_html_draws_one_arrow_per_matched_kernel() {
    let r = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/roofline");
    let device = r.join("PVC_1tile.csv");
    let pair = |tag: &str| {
        r.join(
            format!("{tag}_compute.txt,{tag}_memory.txt")
                .replace(',', &format!(",{}/", r.display())),
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("p.html");
    let (b, c) = (pair("gen_fp16"), pair("gen_new"));
    let o = compare(&[
        "--roofline",
        s(&device),
        s(&b),
        s(&c),
        "--html",
        s(&page),
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    let base = compare::kinds::roofline::model(&device, &b).unwrap();
    let cand = compare::kinds::roofline::model(&device, &c).unwrap();
    let binding = |m: &roofline::model::Roofline, name: &str| {
        let v = m
            .views()
            .into_iter()
            .find(|v| m.kernels[v.kernel].name == name)?;
        let p = v.points[v.binding?].clone();
        (v.selected && p.plotted).then_some(p)
    };
    let matched: Vec<(roofline::model::Point, roofline::model::Point)> = cand
        .kernels
        .iter()
        .filter_map(|k| Some((binding(&base, &k.name)?, binding(&cand, &k.name)?)))
        .collect();
    let arrows: Vec<&str> = html.split("<line class=\"arrow\"").skip(1).collect();
    assert_eq!(arrows.len(), matched.len());
    assert_eq!(arrows.len(), 4);
    let ax = roofline::page::Axes::fitted(&base, matched.iter().flat_map(|(b, c)| [b, c]));
    let attr = |tag: &str, name: &str| -> f64 {
        let i = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        tag[i..i + tag[i..].find('"').unwrap()].parse().unwrap()
    };
    for (bp, cp) in &matched {
        let hit = arrows.iter().any(|a| {
            (attr(a, "x1") - ax.x.map(bp.ai)).abs() < 0.01
                && (attr(a, "y1") - ax.y.map(bp.gflops)).abs() < 0.01
                && (attr(a, "x2") - ax.x.map(cp.ai)).abs() < 0.01
                && (attr(a, "y2") - ax.y.map(cp.gflops)).abs() < 0.01
        });
        assert!(
            hit,
            "no arrow from ({}, {}) to ({}, {})",
            bp.ai, bp.gflops, cp.ai, cp.gflops
        );
    }
    assert!(html.contains("marker-end=\"url(#arrowhead-"));
    // Offline: the only URL is the SVG namespace name.
    assert_eq!(
        html.replace("http://www.w3.org/2000/svg", "")
            .matches("http")
            .count(),
        0
    );
}

/// `--csv d.parquet` holds the rows of `--csv d.csv`, typed
/// (docs/formats.md#parquet-tables).
#[test]
fn csv_as_parquet_holds_the_same_rows_typed() {
    let dir = tempfile::tempdir().unwrap();
    for (b, c) in [
        ("base", "cand"),
        ("base.summary.json", "cand.summary.json"),
        ("base.metrics.csv", "cand.metrics.csv"),
    ] {
        let csv = dir.path().join(format!("{b}.csv"));
        let pq = dir.path().join(format!("{b}.parquet"));
        for out in [&csv, &pq] {
            let o = compare(&[s(&data(b)), s(&data(c)), "-q", "--csv", s(out)]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let csv = std::fs::read(&csv).unwrap();
        let pq = std::fs::read(&pq).unwrap();
        assert!(csv.iter().filter(|&&b| b == b'\n').count() > 3);
        unitrace_render::table::same_as_csv(&csv, pq.clone()).unwrap();
        assert_eq!(
            unitrace_render::table::parquet_schema(pq).unwrap(),
            compare::output::table_schema()
        );
    }
}
