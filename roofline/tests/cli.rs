//! End-to-end tests of the `roofline` binary on bundled profiles
//! (testdata/roofline; see its README for where each file comes from).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_roofline"))
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/roofline")
        .join(name)
}

fn device_json() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../device_configs/pvc.json")
}

fn run(args: &[&std::ffi::OsStr], cwd: &Path) -> Output {
    bin()
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run roofline")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs on a compute/memory pair and returns (stdout, stderr, status, dir).
fn roofline(
    compute: &Path,
    memory: &Path,
    device: &Path,
    extra: &[&str],
) -> (String, String, Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<std::ffi::OsString> = vec![
        "--compute".into(),
        compute.into(),
        "--memory".into(),
        memory.into(),
        "--device".into(),
        device.into(),
    ];
    args.extend(extra.iter().map(|s| s.into()));
    let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let out = run(&refs, dir.path());
    (text(&out.stdout), text(&out.stderr), out, dir)
}

fn assert_same_lines(ours: &str, golden: &str, what: &str) {
    let a: Vec<&str> = ours.lines().collect();
    let b: Vec<&str> = golden.lines().collect();
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "{what}: line {} differs", i + 1);
    }
    assert_eq!(a.len(), b.len(), "{what}: line count differs");
}

/// Golden test: the console summary equals roofline.py's stdout line by
/// line, on the real example (V0 main logs) and on generated files of every
/// format variant (new, v1 with two devices, old, FP16- and FP64-dominated),
/// from the earlier generator and from unitrace-gen.
#[test]
fn summary_matches_the_original() {
    let cases = [
        (
            "gemm_fp16_flops.1799853",
            "gemm_fp16_bytes.1799860",
            "gemm_fp16.orig.stdout",
        ),
        (
            "gen_new_compute.txt",
            "gen_new_memory.txt",
            "gen_new.orig.stdout",
        ),
        (
            "gen_v1_compute.txt",
            "gen_v1_memory.txt",
            "gen_v1.orig.stdout",
        ),
        (
            "gen_old_compute.txt",
            "gen_old_memory.txt",
            "gen_old.orig.stdout",
        ),
        (
            "gen_fp16_compute.txt",
            "gen_fp16_memory.txt",
            "gen_fp16.orig.stdout",
        ),
        (
            "gen_fp64_compute.txt",
            "gen_fp64_memory.txt",
            "gen_fp64.orig.stdout",
        ),
        // The repository's generator (unitrace-gen roofline;
        // testdata/roofline/README.md): mixed precisions, v1 with two
        // devices, a V0 main log.
        (
            "ugen_mixed_compute.txt",
            "ugen_mixed_memory.txt",
            "ugen_mixed.orig.stdout",
        ),
        (
            "ugen_v1_compute.txt",
            "ugen_v1_memory.txt",
            "ugen_v1.orig.stdout",
        ),
        (
            "ugen_old_compute.txt",
            "ugen_old_memory.txt",
            "ugen_old.orig.stdout",
        ),
    ];
    for (c, m, golden) in cases {
        for device in [data("PVC_1tile.csv"), device_json()] {
            let (stdout, stderr, out, dir) =
                roofline(&data(c), &data(m), &device, &["--output", "r.html"]);
            assert!(out.status.success(), "{c}: {stderr}");
            let want = std::fs::read_to_string(data(golden)).unwrap();
            assert_same_lines(&stdout, &want, golden);
            assert!(dir.path().join("r.html").is_file());
        }
    }
}

/// Parses `testdata/roofline/*.orig.points` (the original page's data points)
/// into (series, x, y) strings.
fn original_points(name: &str) -> (String, Vec<(String, String, String)>) {
    let t = std::fs::read_to_string(data(name)).unwrap();
    let mut lines = t.lines();
    let title = lines
        .next()
        .unwrap()
        .trim_start_matches("# title: ")
        .to_string();
    let pts = lines
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect();
    (title, pts)
}

/// The plotted points (x = AI, y = GFLOP/s) and the precision are those of
/// the original page, exactly (same float formula, shortest repr).
#[test]
fn plotted_points_match_the_original_page() {
    for (c, m, golden) in [
        (
            "gemm_fp16_flops.1799853",
            "gemm_fp16_bytes.1799860",
            "gemm_fp16.orig.points",
        ),
        (
            "gen_new_compute.txt",
            "gen_new_memory.txt",
            "gen_new.orig.points",
        ),
        (
            "gen_fp64_compute.txt",
            "gen_fp64_memory.txt",
            "gen_fp64.orig.points",
        ),
    ] {
        let (_, stderr, out, dir) = roofline(
            &data(c),
            &data(m),
            &data("PVC_1tile.csv"),
            &["--output", "r", "--data", "r.csv"],
        );
        assert!(out.status.success(), "{stderr}");
        let (title, want) = original_points(golden);
        let precision = title.split("  ").nth(1).unwrap();
        let mut rdr = csv::Reader::from_path(dir.path().join("r.csv")).unwrap();
        let mut got = Vec::new();
        for rec in rdr.records() {
            let rec = rec.unwrap();
            // The original plotted only the run's dominant precision; we
            // plot every kernel against its own (compatibility.md
            // roofline-11): the kernels of that precision are its points.
            if &rec[15] == "yes" && &rec[5] == precision {
                let series = if &rec[1] == "l3" {
                    "L3_data"
                } else {
                    "Gpu_memory_data"
                };
                got.push((series.to_string(), rec[8].to_string(), rec[9].to_string()));
            }
        }
        got.sort_by_key(|g| g.0 != "L3_data");
        if golden == "gen_fp64.orig.points" {
            // Two of its kernels run some FP64 but mostly FP32: the
            // original put them on the FP64 chart, we place them against
            // FP32, their own precision.
            assert_eq!(got.len(), 2, "{golden}: {got:?}");
            assert!(got.iter().all(|g| want.contains(g)), "{golden}: {got:?}");
        } else {
            assert_eq!(got, want, "{golden}");
        }
        let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
        assert!(html.contains("roofline on PVC_1tile"));
        assert!(html.contains(&format!(
            "class=\"roof compute\" data-precision=\"{precision}\""
        )));
    }
}

/// docs/compatibility.md#roofline-3: `--output x.html` wrote `x.html.html`.
#[test]
fn output_name_gets_html_only_when_missing() {
    for (given, want) in [
        ("x.html", "x.html"),
        ("x", "x.html"),
        ("run.v2", "run.v2.html"),
        ("X.HTML", "X.HTML"),
    ] {
        let (_, stderr, out, dir) = roofline(
            &data("gen_new_compute.txt"),
            &data("gen_new_memory.txt"),
            &device_json(),
            &["--output", given],
        );
        assert!(out.status.success(), "{stderr}");
        let files: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files, [want], "--output {given}");
    }
}

#[test]
fn svg_format_writes_a_standalone_svg() {
    let (_, stderr, out, dir) = roofline(
        &data("gen_new_compute.txt"),
        &data("gen_new_memory.txt"),
        &device_json(),
        &["--output", "fig", "--format", "svg"],
    );
    assert!(out.status.success(), "{stderr}");
    let svg = std::fs::read_to_string(dir.path().join("fig.svg")).unwrap();
    assert!(svg.starts_with("<svg id=\"roofline-plot\" xmlns=\"http://www.w3.org/2000/svg\""));
    // Six kernels, each against its own precision, at two levels.
    assert_eq!(svg.matches("class=\"point level-").count(), 12);
    assert!(!svg.contains("<script"));
    assert!(svg.trim_end().ends_with("</svg>"));
}

/// The page is self-contained: no external script, style or font.
#[test]
fn page_loads_nothing_from_the_network() {
    let (_, _, out, dir) = roofline(
        &data("gemm_fp16_flops.1799853"),
        &data("gemm_fp16_bytes.1799860"),
        &device_json(),
        &["--output", "p.html"],
    );
    assert!(out.status.success());
    let html = std::fs::read_to_string(dir.path().join("p.html")).unwrap();
    assert!(!html.contains("src=\""), "external resource in page");
    assert!(!html.contains("https://"));
    assert!(!html.contains("<link"));
    assert_eq!(html.matches("class=\"point level-").count(), 2);
    assert!(html.contains("id=\"search\""));
}

/// docs/compatibility.md#roofline-1: an FP16-dominated run crashed the original when
/// drawing the roofs (its FP16 peak stayed a string).
#[test]
fn fp16_dominated_run_draws_the_fp16_roof() {
    let (stdout, stderr, out, dir) = roofline(
        &data("gen_fp16_compute.txt"),
        &data("gen_fp16_memory.txt"),
        &data("PVC_1tile.csv"),
        &["--output", "r.html"],
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.starts_with("Kernel_name ,"));
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert!(html.contains("</tspan> peak 39000 GFLOP/s"));
    assert!(html.contains("class=\"roof compute\" data-precision=\"FP16\""));
    assert!(html.contains("class=\"point level-l3"));
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

const MEM_HEADER: &str = "Kernel,GlobalInstanceId,SubDeviceId,GpuTime[ns],AvgGpuCoreFrequencyMHz[MHz],L3_BYTE_READ[bytes],L3_BYTE_WRITE[bytes],GPU_MEMORY_BYTE_READ[bytes],GPU_MEMORY_BYTE_WRITE[bytes],XVE_THREADS_OCCUPANCY_ALL[%]";
const COMP_HEADER: &str = "Kernel,GlobalInstanceId,SubDeviceId,GpuTime[ns],XVE_INST_EXECUTED_FP16[events],XVE_INST_EXECUTED_FP32[events],XVE_INST_EXECUTED_FP64[events],XVE_INST_EXECUTED_XMX_FP16[events],XVE_INST_EXECUTED_XMX_BF16[events],XVE_INST_EXECUTED_XMX_FP16_UTILIZATION[%]";

/// (name, time ns, L3 bytes, GPU-memory bytes) → memory profile text.
fn memory_text(rows: &[(&str, u64, u64, u64)]) -> String {
    let mut s = format!("\n=== Device #0 Metrics ===\n\n{MEM_HEADER}\n");
    for (i, (n, t, l3, gm)) in rows.iter().enumerate() {
        s += &format!(
            "\"{n}\",{i},0,{t},1500,{},{},{},{},50.000000\n\n",
            l3 / 2,
            l3 - l3 / 2,
            gm / 2,
            gm - gm / 2
        );
    }
    s
}

/// (name, FP32 instructions) → compute profile text.
fn compute_text(rows: &[(&str, u64)]) -> String {
    let mut s = format!("\n=== Device #0 Metrics ===\n\n{COMP_HEADER}\n");
    for (i, (n, fp32)) in rows.iter().enumerate() {
        s += &format!("\"{n}\",{i},0,1000,0,{fp32},0,0,0,0.000000\n\n");
    }
    s
}

/// docs/compatibility.md#roofline-2: 0 bytes at a level crashed the original's page
/// (division by zero); we warn and leave that dot out.
#[test]
fn zero_bytes_at_a_level_is_not_plotted() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "m.csv",
        &memory_text(&[("a[SIMD16]", 1000, 0, 4000), ("b[SIMD16]", 500, 1000, 1000)]),
    );
    let c = write(
        dir.path(),
        "c.csv",
        &compute_text(&[("a[SIMD16]", 100), ("b[SIMD16]", 100)]),
    );
    let (_, stderr, out, odir) = roofline(
        &c,
        &m,
        &device_json(),
        &["--output", "r", "--data", "d.csv"],
    );
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "roofline: warning: a[SIMD16]: no bytes through L3; not plotted at that level"
        ),
        "{stderr}"
    );
    let csv = std::fs::read_to_string(odir.path().join("d.csv")).unwrap();
    assert!(csv.contains("a[SIMD16],l3,1000,"));
    let a_l3 = csv.lines().find(|l| l.starts_with("a[SIMD16],l3")).unwrap();
    assert!(a_l3.contains(",inf,") && a_l3.ends_with(",no"), "{a_l3}");
    let html = std::fs::read_to_string(odir.path().join("r.html")).unwrap();
    assert_eq!(html.matches("class=\"point level-l3").count(), 1);
    assert_eq!(html.matches("class=\"point level-gpu_memory").count(), 2);
}

/// docs/compatibility.md#roofline-6: kernels in only one profile are listed, not
/// dropped silently; differing instance counts are reported.
#[test]
fn kernels_in_only_one_profile_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "m.csv",
        &memory_text(&[
            ("a[SIMD16]", 1000, 10, 10),
            ("mem_only[SIMD8]", 10, 10, 10),
            ("a[SIMD16]", 1000, 10, 10),
        ]),
    );
    let c = write(
        dir.path(),
        "c.csv",
        &compute_text(&[("a[SIMD16]", 100), ("compute_only[SIMD32]", 5)]),
    );
    let (stdout, stderr, out, _d) = roofline(&c, &m, &device_json(), &["--output", "r"]);
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines.contains(&"roofline: warning: 1 kernel(s) only in the memory profile (no operation counts; not plotted, their time still counts in the total): mem_only[SIMD8]"), "{stderr}");
    assert!(lines.contains(&"roofline: warning: 1 kernel(s) only in the compute profile (no time or bytes; not plotted): compute_only[SIMD32]"), "{stderr}");
    assert!(lines.contains(&"roofline: warning: 1 kernel(s) ran a different number of times in the two profiles (the runs differ; sums are compared as they are): a[SIMD16] (memory 2, compute 1)"), "{stderr}");
    assert_eq!(stdout.lines().count(), 1 + 1 + 7);
}

/// docs/compatibility.md#roofline-5: the page and --data use decimal units and the
/// plotted precision's peak: roof = min(AI × BW, peak), AI = ops / bytes.
#[test]
fn page_uses_consistent_decimal_units() {
    let dir = tempfile::tempdir().unwrap();
    // 1e9 FP32 instructions = 32e9 operations in 1 ms over 64e9 L3 bytes
    // (AI 0.5) and 16e9 GPU-memory bytes (AI 2).
    let m = write(
        dir.path(),
        "m.csv",
        &memory_text(&[("k[SIMD16]", 1_000_000, 64_000_000_000, 16_000_000_000)]),
    );
    let c = write(
        dir.path(),
        "c.csv",
        &compute_text(&[("k[SIMD16]", 1_000_000_000)]),
    );
    let (_, stderr, out, odir) = roofline(
        &c,
        &m,
        &device_json(),
        &["--output", "r", "--data", "d.csv"],
    );
    assert!(out.status.success(), "{stderr}");
    let mut rdr = csv::Reader::from_path(odir.path().join("d.csv")).unwrap();
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    assert_eq!(&rows[0][5], "FP32");
    // L3: AI 0.5 × 2043 GB/s = 1021.5 GFLOP/s roof; 32000 GFLOP/s measured
    // is above it: flagged.
    assert_eq!(
        (&rows[0][1], &rows[0][8], &rows[0][9], &rows[0][11]),
        ("l3", "0.5", "32000.0", "1021.5")
    );
    assert_eq!((&rows[0][13], &rows[0][14]), ("memory", "yes"));
    // GPU memory: AI 2 × 1055 = 2110 GFLOP/s (not 1024³-based).
    assert_eq!(
        (&rows[1][1], &rows[1][8], &rows[1][11]),
        ("gpu_memory", "2.0", "2110.0")
    );
    let html = std::fs::read_to_string(odir.path().join("r.html")).unwrap();
    assert_eq!(&rows[1][14], "yes");
    assert_eq!(html.matches("class=\"point level-l3 above-roof").count(), 1);
    assert_eq!(
        html.matches("class=\"point level-gpu_memory above-roof")
            .count(),
        1
    );
    assert_eq!(html.matches("<g class=\"warn-mark\"").count(), 2);
}

/// docs/compatibility.md#roofline-7: result-dir metric files have no `Metrics ==`
/// banner; the original could not read them.
#[test]
fn result_dir_files_without_banner_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let strip = |s: String| s.replace("\n=== Device #0 Metrics ===\n", "");
    let m = write(
        dir.path(),
        "metrics_0.csv",
        &strip(memory_text(&[("k[SIMD16]", 1000, 100, 100)])),
    );
    let c = write(
        dir.path(),
        "metrics_1.csv",
        &strip(compute_text(&[("k[SIMD16]", 10)])),
    );
    let (stdout, stderr, out, _d) = roofline(&c, &m, &device_json(), &["--output", "r"]);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout
        .lines()
        .nth(1)
        .unwrap()
        .starts_with("kSIMD , 1e-06 , 100.0 % ,"));
}

/// Bad input: one line `roofline: FILE[:LINE]: problem`, exit 1, no output.
fn assert_fails(c: &Path, m: &Path, device: &Path, want: &str) {
    let (_, stderr, out, dir) = roofline(c, m, device, &["--output", "r.html", "--data", "d.csv"]);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("roofline: "), "{stderr}");
    assert!(stderr.contains(want), "want `{want}` in {stderr}");
    assert!(!dir.path().join("r.html").exists());
    assert!(!dir.path().join("d.csv").exists());
}

#[test]
fn missing_column_in_either_profile_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let good_m = write(
        dir.path(),
        "m.csv",
        &memory_text(&[("k[SIMD16]", 1000, 100, 100)]),
    );
    let good_c = write(dir.path(), "c.csv", &compute_text(&[("k[SIMD16]", 10)]));
    let bad_c = write(
        dir.path(),
        "bc.csv",
        &std::fs::read_to_string(&good_c).unwrap().replace(
            "XVE_INST_EXECUTED_FP64[events]",
            "XVE_INST_EXECUTED_INT64[events]",
        ),
    );
    assert_fails(&bad_c, &good_m, &device_json(), "bc.csv:4: compute profile: missing column XVE_INST_EXECUTED_FP64[events] (profile the VectorEngine138 metric group)");
    let bad_m = write(
        dir.path(),
        "bm.csv",
        &std::fs::read_to_string(&good_m)
            .unwrap()
            .replace("GPU_MEMORY_BYTE_WRITE", "GPU_MEMORY_BYTE_WRITTEN"),
    );
    assert_fails(&good_c, &bad_m, &device_json(), "bm.csv:4: memory profile: missing column GPU_MEMORY_BYTE_WRITE[bytes] (profile the ComputeBasic metric group)");
    // Swapped profiles: the memory file lacks the compute counters.
    assert_fails(
        &good_m,
        &good_c,
        &device_json(),
        "memory profile: missing column L3_BYTE_READ[bytes]",
    );
}

#[test]
fn missing_section_in_either_profile_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let good_m = write(
        dir.path(),
        "m.csv",
        &memory_text(&[("k[SIMD16]", 1000, 100, 100)]),
    );
    let good_c = write(dir.path(), "c.csv", &compute_text(&[("k[SIMD16]", 10)]));
    let log = write(
        dir.path(),
        "log.txt",
        "=== Device Timing Summary ===\n\n       Kernel,   Calls,\nk[SIMD16],    1,\n",
    );
    assert_fails(&log, &good_m, &device_json(), "log.txt: compute profile: missing section: no `Metrics ==` banner and no `Kernel,` header line");
    let banner_only = write(dir.path(), "b.csv", "\n=== Device #0 Metrics ===\n\n");
    assert_fails(&good_c, &banner_only, &device_json(), "b.csv: memory profile: missing section: the `Metrics ==` section has no `Kernel,` header line");
    let empty = write(
        dir.path(),
        "e.csv",
        &format!("\n=== Device #0 Metrics ===\n\n{COMP_HEADER}\n\n"),
    );
    assert_fails(
        &empty,
        &good_m,
        &device_json(),
        "e.csv: compute profile: the metric section has no kernel rows",
    );
}

#[test]
fn non_numeric_values_are_reported_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let good_m = write(
        dir.path(),
        "m.csv",
        &memory_text(&[("k[SIMD16]", 1000, 100, 100)]),
    );
    let c = write(
        dir.path(),
        "c.csv",
        &compute_text(&[("k[SIMD16]", 10)]).replace(",0,10,0,0,0,", ",0,ten,0,0,0,"),
    );
    assert_fails(
        &c,
        &good_m,
        &device_json(),
        "c.csv:5: compute profile: column XVE_INST_EXECUTED_FP32[events]: `ten` is not a number",
    );
    let dev = write(
        dir.path(),
        "dev.csv",
        &std::fs::read_to_string(data("PVC_1tile.csv"))
            .unwrap()
            .replace("FP32_GFLOPS,32000", "FP32_GFLOPS,32 TF"),
    );
    let good_c = write(dir.path(), "c2.csv", &compute_text(&[("k[SIMD16]", 10)]));
    assert_fails(
        &good_c,
        &good_m,
        &dev,
        "dev.csv:5: FP32_GFLOPS: `32 TF` is not a number",
    );
}

#[test]
fn device_file_with_missing_peak_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "m.csv",
        &memory_text(&[("k[SIMD16]", 1000, 100, 100)]),
    );
    let c = write(dir.path(), "c.csv", &compute_text(&[("k[SIMD16]", 10)]));
    let dev = write(
        dir.path(),
        "dev.csv",
        &std::fs::read_to_string(data("PVC_1tile.csv"))
            .unwrap()
            .replace("BF16_XMX_GFLOPS,314000\n", ""),
    );
    assert_fails(&c, &m, &dev, "dev.csv: missing BF16_XMX_GFLOPS");
    let json = std::fs::read_to_string(device_json()).unwrap();
    let v: serde_like::Stripped = serde_like::strip_key(&json, "\"fp64\"");
    let devj = write(dir.path(), "dev.json", &v.0);
    assert_fails(&c, &m, &devj, "dev.json: missing peak_gflops.fp64");
}

/// Removes the line holding `key` from a pretty-printed JSON object (the
/// device files put one value per line).
mod serde_like {
    pub struct Stripped(pub String);
    pub fn strip_key(json: &str, key: &str) -> Stripped {
        let kept: Vec<&str> = json
            .lines()
            .filter(|l| !l.trim_start().starts_with(key))
            .collect();
        Stripped(kept.join("\n"))
    }
}

#[test]
fn neither_app_nor_both_profiles_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["--compute", "c.csv", "--device", "d.json", "--output", "r"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("You must provide either --app or both --compute and --memory")
    );
}

/// docs/compatibility.md#roofline-4: the original's help swaps the metric groups.
#[test]
fn help_names_the_right_metric_groups() {
    let out = bin().arg("--help").output().unwrap();
    let help = text(&out.stdout);
    let compute = help
        .lines()
        .find(|l| l.contains("Compute profile"))
        .unwrap();
    assert!(compute.contains("VectorEngine138"), "{compute}");
    let memory = help.lines().find(|l| l.contains("Memory profile")).unwrap();
    assert!(memory.contains("ComputeBasic"), "{memory}");
}

/// Long options may be abbreviated like argparse allows (docs/compatibility.md#conventions).
#[test]
fn abbreviated_long_options() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .arg("--comp")
        .arg(data("gen_new_compute.txt"))
        .arg("--mem")
        .arg(data("gen_new_memory.txt"))
        .arg("--dev")
        .arg(device_json())
        .args(["--out", "r"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(dir.path().join("r.html").is_file());
}

/// A stand-in unitrace in a fresh directory (copied so it is executable
/// whatever the checkout did to file modes).
fn fake_unitrace(dir: &Path) -> PathBuf {
    let p = dir.join("unitrace");
    std::fs::copy(data("fake_unitrace.sh"), &p).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    p
}

/// `--app`: two unitrace runs with the original's groups and options, the
/// command split with shell rules and passed without a shell, the metric
/// files found under unitrace's names, and the work directory removed. The
/// working directory path contains a dot (docs/compatibility.md#roofline-8).
#[test]
fn app_mode_runs_unitrace_twice_without_a_shell() {
    let tmp = tempfile::tempdir().unwrap();
    let cwd = tmp.path().join("my.project");
    std::fs::create_dir(&cwd).unwrap();
    let ut = fake_unitrace(tmp.path());
    let log = tmp.path().join("calls.log");
    let out = bin()
        .args(["--app", "./a.out \"two words\" '$HOME;rm -rf x' --flag=1"])
        .arg("--unitrace")
        .arg(&ut)
        .arg("--device")
        .arg(device_json())
        .args(["--output", "app.html", "--data", "app.csv"])
        .env("FAKE_UNITRACE_DATA", data(""))
        .env("FAKE_UNITRACE_LOG", &log)
        .current_dir(&cwd)
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let calls = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = calls.lines().collect();
    assert_eq!(lines.len(), 10, "{calls}");
    assert!(lines[0].starts_with("group=ComputeBasic out=Unitrace_result_"));
    assert!(lines[0].ends_with("/_IntelGPUBasic"));
    assert_eq!(
        &lines[1..5],
        [
            "arg=./a.out",
            "arg=two words",
            "arg=$HOME;rm -rf x",
            "arg=--flag=1"
        ]
    );
    assert!(lines[5].starts_with("group=VectorEngine138 out=Unitrace_result_"));
    assert!(lines[5].ends_with("/_IntelGPUCompute"));
    // Same summary as --compute/--memory on the same files.
    let golden = std::fs::read_to_string(data("gen_new.orig.stdout")).unwrap();
    let summary: Vec<&str> = stdout
        .lines()
        .filter(|l| !l.starts_with("The command is [") && !l.starts_with("Output directory "))
        .collect();
    assert_eq!(summary, golden.lines().collect::<Vec<_>>());
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("The command is ["))
            .count(),
        2
    );
    assert!(stdout
        .lines()
        .last()
        .unwrap()
        .ends_with("has been removed."));
    let left: Vec<String> = std::fs::read_dir(&cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut left = left;
    left.sort();
    assert_eq!(left, ["app.csv", "app.html"]);
}

#[test]
fn app_mode_fails_when_unitrace_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let ut = fake_unitrace(tmp.path());
    let out = bin()
        .args(["--app", "./a.out"])
        .arg("--unitrace")
        .arg(&ut)
        .arg("--device")
        .arg(device_json())
        .args(["--output", "app.html"])
        .env("FAKE_UNITRACE_DATA", data(""))
        .env("FAKE_UNITRACE_FAIL", "VectorEngine138")
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "roofline: unitrace run with --group VectorEngine138 failed (exit status: 3)"
        ),
        "{stderr}"
    );
    assert!(!tmp.path().join("app.html").exists());
    let left = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("Unitrace_result_")
        })
        .count();
    assert_eq!(left, 0, "work directory left behind");
}

#[test]
fn app_mode_checks_the_unitrace_path() {
    let tmp = tempfile::tempdir().unwrap();
    let not_exec = write(tmp.path(), "unitrace.txt", "not a program");
    let out = bin()
        .args(["--app", "./a.out"])
        .arg("--unitrace")
        .arg(&not_exec)
        .arg("--device")
        .arg(device_json())
        .args(["--output", "x"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is not valid or not executable."));
    let out = bin()
        .args(["--app", "./a.out 'unclosed"])
        .arg("--unitrace")
        .arg(fake_unitrace(tmp.path()))
        .arg("--device")
        .arg(device_json())
        .args(["--output", "x"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unterminated single quote"));
}

/// A device file may list further memory levels; their dots and rows
/// appear when the memory profile has `<LEVEL>_BYTE_READ/WRITE` counters,
/// and a level the profile lacks is left out.
#[test]
fn further_memory_levels_are_plotted_when_profiled() {
    let dir = tempfile::tempdir().unwrap();
    let json = std::fs::read_to_string(device_json()).unwrap().replace(
        "\"l3\": 2043",
        "\"l3\": 2043,\n    \"load_store_cache\": 6000,\n    \"slm\": 9000",
    );
    let dev = write(dir.path(), "dev.json", &json);
    let header = format!(
        "{MEM_HEADER},LOAD_STORE_CACHE_BYTE_READ[bytes],LOAD_STORE_CACHE_BYTE_WRITE[bytes]"
    );
    let m = write(
        dir.path(),
        "m.csv",
        &format!("\n{header}\n\"k[SIMD16]\",1,0,1000,1500,50,50,10,10,40,300,100\n\n\"j[SIMD16]\",2,0,500,1500,50,50,10,10,40,30,10\n"),
    );
    let c = write(
        dir.path(),
        "c.csv",
        &compute_text(&[("k[SIMD16]", 100), ("j[SIMD16]", 100)]),
    );
    let (stdout, stderr, out, odir) = roofline(&c, &m, &dev, &["--output", "r", "--data", "d.csv"]);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.lines().count(), 1 + 2 + 7);
    let csv = std::fs::read_to_string(odir.path().join("d.csv")).unwrap();
    let levels: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(
        levels,
        [
            "l3",
            "gpu_memory",
            "load_store_cache",
            "l3",
            "gpu_memory",
            "load_store_cache"
        ]
    );
    assert!(csv.contains("k[SIMD16],load_store_cache,1000,66.66666666666667,1,FP32,3200,400,8.0,3.2,6000.0,32000.0,0.01,"), "{csv}");
    let html = std::fs::read_to_string(odir.path().join("r.html")).unwrap();
    assert_eq!(
        html.matches("class=\"point level-load_store_cache").count(),
        2
    );
    assert!(html.contains("load store cache (6000 GB/s)"));
    assert!(!html.contains("level-slm"));
}

/// `--data r.parquet` holds the rows of `--data r.csv`, typed
/// (docs/formats.md#parquet-tables-roofline): nanoseconds as INT64.
#[test]
fn data_parquet_holds_the_csv_rows_typed() {
    let c = data("gen_new_compute.txt");
    let m = data("gen_new_memory.txt");
    let dev = data("PVC_1tile.csv");
    let (_, stderr, out, dir) = roofline(&c, &m, &dev, &["--output", "r", "--data", "r.csv"]);
    assert!(out.status.success(), "{stderr}");
    let (_, stderr, out, pdir) = roofline(&c, &m, &dev, &["--output", "r", "--data", "r.parquet"]);
    assert!(out.status.success(), "{stderr}");
    let csv = std::fs::read(dir.path().join("r.csv")).unwrap();
    let pq = std::fs::read(pdir.path().join("r.parquet")).unwrap();
    assert!(csv.len() > 100 && pq.starts_with(b"PAR1"));
    unitrace_render::table::same_as_csv(&csv, pq.clone()).unwrap();
    let schema = unitrace_render::table::parquet_schema(pq).unwrap();
    let types: Vec<String> = schema
        .columns
        .iter()
        .map(|c| format!("{}:{:?}", c.name, c.ty))
        .collect();
    assert_eq!(
        types[..5],
        [
            "kernel:Utf8",
            "level:Utf8",
            "time_ns:Int64",
            "time_pct:Float64",
            "instances:Int64"
        ]
    );
    assert_eq!(types[15], "plotted:Bool");
}

/// `GpuTime[ns]` with fractions (a hand-edited profile; unitrace writes
/// integers) is summed, then rounded to whole ns in both the CSV and the
/// Parquet `time_ns`, which stays INT64 (docs/formats.md#parquet-tables-roofline).
#[test]
fn fractional_gpu_time_is_rounded_to_whole_nanoseconds() {
    let dir = tempfile::tempdir().unwrap();
    let m = write(
        dir.path(),
        "m.csv",
        &format!(
            "\n{MEM_HEADER}\n\"k[SIMD16]\",1,0,1000.25,1500,50,50,10,10,40\n\n\"k[SIMD16]\",2,0,0.5,1500,50,50,10,10,40\n"
        ),
    );
    let c = write(dir.path(), "c.csv", &compute_text(&[("k[SIMD16]", 100)]));
    let dev = data("PVC_1tile.csv");
    let (_, stderr, out, odir) = roofline(&c, &m, &dev, &["--output", "r", "--data", "d.csv"]);
    assert!(out.status.success(), "{stderr}");
    let (_, stderr, out, pdir) = roofline(&c, &m, &dev, &["--output", "r", "--data", "d.parquet"]);
    assert!(out.status.success(), "{stderr}");
    let csv = std::fs::read(odir.path().join("d.csv")).unwrap();
    let times: Vec<String> = String::from_utf8_lossy(&csv)
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(2).unwrap().to_string())
        .collect();
    // 1000.25 + 0.5 = 1000.75 ns, one row per memory level.
    assert_eq!(times, ["1001", "1001"]);
    let pq = std::fs::read(pdir.path().join("d.parquet")).unwrap();
    unitrace_render::table::same_as_csv(&csv, pq.clone()).unwrap();
    let schema = unitrace_render::table::parquet_schema(pq).unwrap();
    assert_eq!(
        schema.columns[2].ty,
        unitrace_render::parquet::ColumnType::Int64
    );
}
