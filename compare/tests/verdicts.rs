//! Known answers of compare's verdicts (docs/compare.md#significance,
//! docs/compare.md#verdict) on testdata/compare: gemm10/ (generated, every
//! gemm_kernel 10% slower on every rank), runs/ (three repeated runs per
//! side with known jitter), straggler/ (one rank 1.45x slower);
//! make_verdicts.py says how each was made.

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

/// Runs with `--json` (and `-q`) and returns (output, document).
fn json_of(args: &[&str]) -> (Output, Value) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c.json");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", s(&out), "-q"]);
    let o = compare(&all);
    assert!(
        o.status.success() || o.status.code() == Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    (o, doc)
}

fn section<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["section"] == name)
        .unwrap_or_else(|| panic!("no section {name}"))
}

fn row<'a>(doc: &'a Value, sec: &str, name: &str) -> &'a Value {
    section(doc, sec)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {sec}/{name}"))
}

fn significant_names(doc: &Value, sec: &str) -> Vec<String> {
    section(doc, sec)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["significant"] == true)
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"))
}

fn close(v: &Value, want: f64, tol: f64) {
    let got = num(v);
    assert!((got - want).abs() <= tol, "{got} != {want}");
}

/// The sum of the `dur` of every `gemm_kernel` device operation of the
/// JSON traces in `dir`, read independently of tracestat.
fn gemm_kernel_us(dir: &Path) -> f64 {
    let mut total = 0.0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let doc: Value =
            serde_json::from_slice(&std::fs::read(entry.unwrap().path()).unwrap()).unwrap();
        for e in doc["traceEvents"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap_or("");
            if e["ph"] == "X" && e["cat"] == "gpu_op" && name.starts_with("gemm_kernel") {
                total += num(&e["dur"]);
            }
        }
    }
    total
}

/// Every gemm_kernel 10% slower on every one of 8 ranks: the rank-to-rank
/// spread is no noise, so the change is significant and the run worse,
/// though the total moved only 1.6% (under the 5% threshold).
#[test]
fn gemm_ten_percent_slower_on_every_rank_is_worse() {
    let (base, cand) = (data("gemm10/base"), data("gemm10/cand"));
    let (o, doc) = json_of(&[s(&base), s(&cand)]);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let gemm = row(&doc, "kernel", "gemm_kernel");
    let want = gemm_kernel_us(&base);
    close(&gemm["baseline_us"], want, 1e-6);
    // Durations are written to the nanosecond: 1.1 x each, rounded.
    close(&gemm["candidate_us"], want * 1.1, 0.016);
    close(&gemm["change_pct"], 10.0, 0.01);
    assert_eq!(gemm["significant"], true);
    assert_eq!(gemm["beyond_threshold"], true);
    assert_eq!(significant_names(&doc, "kernel"), ["gemm_kernel"]);
    assert_eq!(doc["verdict"], "worse");
    let reason = doc["verdict_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("1 kernel row significantly slower: gemm_kernel +10.0%"),
        "{reason}"
    );
    assert_eq!(doc["total"]["significant"], false);
    assert_eq!(doc["total"]["beyond_threshold"], false);
    assert_eq!(doc["significance"]["test"], "threshold_only");
    close(&doc["significance"]["threshold_pct"], 5.0, 0.0);
    close(&doc["significance"]["threshold_us"], 10.0, 0.0);

    let out = compare(&[s(&base), s(&cand)]);
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("verdict: worse. 1 kernel row significantly slower: gemm_kernel +10.0%"),
        "{first}"
    );
    assert!(!text.contains("within noise"), "{text}");
    assert!(
        text.contains("gemm_kernel") && text.contains("+10.0  1.100  slower"),
        "{text}"
    );
}

/// A run compared with itself: nothing changed, the verdict says so.
#[test]
fn a_run_against_itself_is_unchanged() {
    let base = data("gemm10/base");
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("c.md");
    let (_, doc) = json_of(&[s(&base), s(&base), "--markdown", s(&md)]);
    assert_eq!(doc["verdict"], "unchanged");
    assert!(doc["verdict_reason"]
        .as_str()
        .unwrap()
        .starts_with("No significant change: the total (kernel time, all ranks) did not change"));
    for sec in doc["sections"].as_array().unwrap() {
        for r in sec["rows"].as_array().unwrap() {
            assert_eq!(r["delta_us"], 0.0);
            assert_eq!(r["significant"], false);
            // No net change: no share of it.
            assert_eq!(r["share_of_change_pct"], Value::Null);
        }
    }
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.starts_with("### compare: **unchanged**. No significant change"),
        "{md}"
    );
    assert!(!md.contains("| name |"), "{md}");
    assert!(
        md.contains("No significant change (18 rows within the threshold)."),
        "{md}"
    );
    let out = compare(&[s(&base), s(&base)]);
    assert!(String::from_utf8(out.stdout)
        .unwrap()
        .starts_with("verdict: unchanged. "));
}

/// Three runs per side: a row's noise is the run-to-run spread (Welch's
/// t-test on the per-run values); relu's +8% passes the threshold but not
/// the noise, gemm's +10% passes both.
#[test]
fn repeated_runs_measure_the_noise() {
    let (o, doc) = json_of(&[s(&data("runs/base")), "--vs", s(&data("runs/cand"))]);
    assert!(o.status.success());
    assert_eq!(doc["baseline_runs"].as_array().unwrap().len(), 3);
    assert_eq!(doc["candidate_runs"].as_array().unwrap().len(), 3);
    assert!(doc["baseline_runs"][2]
        .as_str()
        .unwrap()
        .ends_with("runs/base/3"));
    assert_eq!(doc["significance"]["test"], "welch");

    // Student's t CDF, 4 degrees of freedom: 1/2 + 3x/4 - x^3/4, x = t/sqrt(t^2+4).
    let p4 = |t: f64| {
        let x = t / (t * t + 4.0).sqrt();
        2.0 * (0.5 - 0.75 * x + 0.25 * x * x * x)
    };
    let gemm = row(&doc, "kernel", "gemm");
    close(&gemm["baseline_us"], 600.0, 1e-9);
    close(&gemm["candidate_us"], 660.0, 1e-9);
    close(&gemm["baseline_sd_us"], 6.0, 1e-9);
    close(&gemm["candidate_sd_us"], 6.0, 1e-9);
    close(&gemm["p_value"], p4(60.0 / 24f64.sqrt()), 1e-9);
    assert_eq!(gemm["significant"], true);

    let relu = row(&doc, "kernel", "relu");
    close(&relu["delta_us"], 16.0, 1e-9);
    close(&relu["baseline_sd_us"], 24.0, 1e-9);
    let se = 384f64.sqrt();
    close(&relu["p_value"], p4(16.0 / se), 1e-9);
    close(&relu["p_value"], 0.4601, 1e-4);
    // The noise: the 97.5% quantile of t(4), 2.776445, times the
    // standard error.
    close(&relu["noise_us"], 2.776445 * se, 1e-4);
    assert_eq!(relu["beyond_threshold"], true);
    assert_eq!(relu["significant"], false);
    assert_eq!(significant_names(&doc, "kernel"), ["gemm"]);
    assert_eq!(row(&doc, "kernel", "norm")["significant"], false);

    // The runs named one by one: the same numbers.
    let runs = |side: &str| -> Vec<String> {
        (1..=3)
            .map(|i| s(&data(&format!("runs/{side}/{i}"))).to_string())
            .collect()
    };
    let (b, c) = (runs("base"), runs("cand"));
    let mut args: Vec<&str> = b.iter().map(String::as_str).collect();
    args.push("--vs");
    args.extend(c.iter().map(String::as_str));
    let (_, listed) = json_of(&args);
    assert_eq!(listed["sections"], doc["sections"]);
    assert_eq!(listed["baseline_runs"], doc["baseline_runs"]);

    // One run per side: the threshold alone calls relu's change (+16 us,
    // +9.1%) significant; the noise above says it is not.
    let (_, one) = json_of(&[&b[0], &c[0]]);
    assert_eq!(one["significance"]["test"], "threshold_only");
    assert_eq!(row(&one, "kernel", "relu")["significant"], true);

    // Three runs against one: that side's variance stands for both.
    let (_, three_one) = json_of(&[&b[0], &b[1], &b[2], "--vs", &c[0]]);
    assert_eq!(three_one["significance"]["test"], "one_sided_variance");
    assert!(num(&row(&three_one, "kernel", "relu")["p_value"]) > 0.05);

    // The console says how significance was judged.
    let out = compare(&[s(&data("runs/base")), "--vs", s(&data("runs/cand"))]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "and beyond the run-to-run noise (Welch t-test, 3 + 3 runs, two-sided, alpha 0.05)"
        ),
        "{text}"
    );
    assert!(text.contains("noise_us"), "{text}");
}

/// A folder of identical runs against itself: no noise, no change.
#[test]
fn folders_of_runs_and_result_dir_trees() {
    let gen = data("../tracestat/gen");
    let dir = tempfile::tempdir().unwrap();
    // runs/a and runs/b: plain rank files; trees/x and trees/y: result-dir
    // trees (rank_<r>.<app>.<pid>/chrome_trace.json).
    for run in ["runs/a", "runs/b", "trees/x", "trees/y"] {
        for entry in std::fs::read_dir(&gen).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            let to = if run.starts_with("trees") {
                let parts: Vec<&str> = name.split('.').collect();
                let folder = dir
                    .path()
                    .join(run)
                    .join(format!("rank_{}.python.{}", parts[2], parts[1]));
                std::fs::create_dir_all(&folder).unwrap();
                folder.join("chrome_trace.json")
            } else {
                std::fs::create_dir_all(dir.path().join(run)).unwrap();
                dir.path().join(run).join(&name)
            };
            std::fs::copy(&p, to).unwrap();
        }
    }
    let (runs, trees) = (dir.path().join("runs"), dir.path().join("trees"));
    let (_, doc) = json_of(&[s(&runs), s(&trees)]);
    assert_eq!(doc["baseline_runs"].as_array().unwrap().len(), 2);
    assert_eq!(doc["candidate_runs"].as_array().unwrap().len(), 2);
    assert_eq!(doc["significance"]["test"], "welch");
    assert_eq!(doc["verdict"], "unchanged");
    let gemm = &section(&doc, "kernel")["rows"][0];
    assert_eq!(gemm["baseline_sd_us"], 0.0);
    assert_eq!(gemm["p_value"], 1.0);
    // A result-dir tree alone is one run, not a folder of runs.
    let (_, one) = json_of(&[s(&trees.join("x")), s(&gen)]);
    assert_eq!(one["baseline_runs"].as_array().unwrap().len(), 1);
    assert_eq!(one["verdict"], "unchanged");
}

/// A straggler against a clean run: the straggler rank's compute row is
/// the significant one of its section (the others wait: communication).
#[test]
fn straggler_rank_row_is_significant() {
    let (_, doc) = json_of(&[s(&data("straggler/base")), s(&data("straggler/cand"))]);
    let compute: Vec<String> = significant_names(&doc, "rank")
        .into_iter()
        .filter(|n| n.ends_with(" compute"))
        .collect();
    assert_eq!(compute, ["rank 1 compute"]);
    let r1 = row(&doc, "rank", "rank 1 compute");
    close(&r1["change_pct"], 45.0, 0.1);
    assert_eq!(row(&doc, "rank", "rank 0 compute")["significant"], false);
    // The straggler's slowness made rank 0 wait longer at the collective.
    assert_eq!(
        row(&doc, "rank", "rank 0 communication")["significant"],
        true
    );
    assert_eq!(doc["verdict"], "worse");
}

/// The pull-request comment: the verdict first, only significant rows,
/// long names shortened with the full name kept, no share of a net change
/// within the threshold.
#[test]
fn markdown_lists_only_significant_rows() {
    let dir = tempfile::tempdir().unwrap();
    let md_of = |b: &str, c: &str| -> String {
        let out = dir.path().join("c.md");
        let o = compare(&[s(&data(b)), s(&data(c)), "-q", "--markdown", s(&out)]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(&out).unwrap()
    };
    let md = md_of("base", "cand");
    let first = md.lines().next().unwrap();
    assert_eq!(
        first,
        "### compare: **worse**. The total (kernel time, all ranks) rose 11.8% (+120.000 us), a significant change."
    );
    let kernel = &md[md.find("#### kernel").unwrap()..md.find("#### rank").unwrap()];
    let rows: Vec<&str> = kernel.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(
        rows,
        [
            "| name | baseline_us | candidate_us | delta_us | change_% | ratio | share_% | note |",
            "| relu&lt;float> | 200.000 | 0.000 | -200.000 | -100.0 | 0.000 | -166.7 | vanished |",
            "| relu&lt;half> | 0.000 | 200.000 | +200.000 | - | - | 166.7 | new |",
            "| gemm | 630.000 | 756.000 | +126.000 | +20.0 | 1.200 | 105.0 |  |",
            "| old_kernel | 60.000 | 0.000 | -60.000 | -100.0 | 0.000 | -50.0 | vanished |",
            "| new_kernel | 0.000 | 50.000 | +50.000 | - | - | 41.7 | new |",
        ]
    );
    // gemm10: the kernel section's net change (+1.6%) is within the
    // threshold: no share column; names are short.
    let md = md_of("gemm10/base", "gemm10/cand");
    assert!(md.starts_with("### compare: **worse**. 1 kernel row significantly slower"));
    assert!(md.contains("| name | baseline_us | candidate_us | delta_us | change_% | ratio |\n|---|---:|---:|---:|---:|---:|\n| gemm_kernel | 885.975 | 974.572 | +88.597 | +10.0 | 1.100 |"), "{md}");
    assert!(!md.contains("share"), "{md}");
    assert!(
        md.contains("No significant change (3 rows within the threshold)."),
        "{md}"
    );
    let md = md_of("straggler/base", "straggler/cand");
    assert!(md.contains("| <details><summary>xpu::xetla::HgemmQKVKernel&lt;...></summary>xpu::xetla::HgemmQKVKernel&lt;sycl::_V1::detail::half_impl::half, "), "{md}");
}

#[test]
fn fail_if_needs_a_unit() {
    let (b, c) = (data("base"), data("cand"));
    let o = compare(&[s(&b), s(&c), "-q", "--fail-if", "total>2"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(
        err.trim_end(),
        "compare: --fail-if 'total>2': the threshold '2' has no unit; give a percentage (+5%), a time (+250us, 2ms, 1s, 500ns) or, for a metric that is not a time, points of its own unit (+5pt)"
    );
    // With a unit: +120 us is above 2 us and above 2%.
    for rule in ["total>2us", "total>+2%"] {
        let o = compare(&[s(&b), s(&c), "-q", "--fail-if", rule]);
        assert_eq!(o.status.code(), Some(3), "{rule}");
    }
    let o = compare(&[s(&b), s(&c), "-q", "--fail-if", "kernel:gemm@count>1ms"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("'count' is not a time"));
}

#[test]
fn threshold_and_run_lists_are_checked() {
    let (b, c) = (data("base"), data("cand"));
    // norm: +4 us, +8%: significant once the absolute threshold is 1 us.
    let (_, doc) = json_of(&[s(&b), s(&c), "--threshold", "5%,1us"]);
    assert_eq!(row(&doc, "kernel", "norm")["significant"], true);
    close(&doc["significance"]["threshold_us"], 1.0, 0.0);
    let (_, doc) = json_of(&[s(&b), s(&c), "--threshold", "10%"]);
    assert_eq!(row(&doc, "kernel", "norm")["significant"], false);
    close(&doc["significance"]["threshold_us"], 10.0, 0.0);
    for bad in [
        vec!["--threshold", "5"],
        vec!["--threshold=-5%"],
        vec!["--alpha", "1.5"],
    ] {
        let mut args = vec![s(&b), s(&c)];
        args.extend(bad.iter().copied());
        let o = compare(&args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert_eq!(String::from_utf8_lossy(&o.stderr).lines().count(), 1);
    }
    // Three runs without --vs: which are the candidate's?
    let o = compare(&[s(&b), s(&c), s(&c)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("name the candidate's runs with --vs"));
    let o = compare(&[s(&b)]);
    assert_eq!(o.status.code(), Some(2));
}

/// The page: per section, bars of the change diverging from zero (red
/// slower, green faster when significant, grey otherwise), round ticks in
/// one unit, every bar's full name and numbers in its tooltip.
#[test]
fn html_draws_delta_bars() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("c.html");
    let o = compare(&[s(&data("base")), s(&data("cand")), "-q", "--html", s(&page)]);
    assert!(o.status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<h1>compare: worse</h1>"));
    let kernel = &html[html.find("<h2>kernel</h2>").unwrap()..html.find("<h2>rank</h2>").unwrap()];
    // Bars drawn: every row with a change (softmax has none).
    let bars: Vec<&str> = kernel.split("<g><title>").skip(1).collect();
    assert_eq!(bars.len(), 6);
    let fill = |name: &str| -> &str {
        let b = bars
            .iter()
            .find(|b| b.starts_with(&format!("{name}\n")))
            .unwrap_or_else(|| panic!("no bar {name}"));
        let i = b.find("fill=\"").unwrap() + 6;
        &b[i..i + 7]
    };
    assert_eq!(fill("gemm"), "#d62728");
    assert_eq!(fill("relu&lt;float&gt;"), "#2ca02c");
    assert_eq!(fill("norm"), "#b4b4b4");
    assert!(kernel.contains(
        "<title>gemm\n630.000 us -&gt; 756.000 us: +126.000 us (+20.0%), significant</title>"
    ));
    // Round ticks from -200 to +200 us, signed, in one unit.
    for t in ["-200", "-100", ">0<", "+100", "+200"] {
        let t = if t == ">0<" {
            ">0</text>".to_string()
        } else {
            format!(">{t}</text>")
        };
        assert!(kernel.contains(&t), "{t}");
    }
    assert!(kernel.contains(">change, us (candidate - baseline)</text>"));
    // Labels at a readable size.
    assert!(kernel.contains("font-size=\"13\""));
    assert!(!kernel.contains("e+") && !kernel.contains("e8"));
}
