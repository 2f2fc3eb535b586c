//! The chart on a mixed-precision workload (testdata/roofline/gen_mixed_*:
//! an FP16_XMX GEMM and convolution, FP32 and FP16 element-wise kernels,
//! FP64 and BF16_XMX operations that dominate no kernel): every kernel
//! against its own dominant precision, one compute roof per precision,
//! points joined across levels, axes fitted to the data, labels, and
//! `--device` names (docs/compatibility.md#roofline-11 .. roofline-14).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use regex::Regex;
use unitrace_core::device_config::{DeviceConfig, Precision};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/roofline")
        .join(name)
}

struct Run {
    out: Output,
    dir: tempfile::TempDir,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap()
    }
}

/// Runs on the mixed pair in a fresh directory (so `--device pvc` cannot
/// be a file there).
fn mixed(extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_roofline"))
        .arg("--compute")
        .arg(data("gen_mixed_compute.txt"))
        .arg("--memory")
        .arg(data("gen_mixed_memory.txt"))
        .args(extra)
        .current_dir(dir.path())
        .output()
        .unwrap();
    Run { out, dir }
}

fn pvc() -> DeviceConfig {
    DeviceConfig::from_path(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../device_configs/pvc.json"),
    )
    .unwrap()
}

/// The summary's per-kernel GFLOP/s columns, in `Precision::ALL` order.
fn summary_gflops(stdout: &str) -> Vec<[f64; 5]> {
    stdout
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("FP16_total"))
        .map(|l| {
            let f: Vec<f64> = l
                .split(" , ")
                .skip(4)
                .take(6)
                .map(|x| x.trim().parse().unwrap())
                .collect();
            // FP16, FP32, FP64, BF16_XMX, FP16_XMX(Gops), FP16_XMX
            [f[0], f[5], f[3], f[1], f[2]]
        })
        .collect()
}

#[test]
fn every_kernel_gets_its_dominant_precisions_gflops_and_bound() {
    let run = mixed(&["--device", "pvc", "--output", "r", "--data", "r.csv"]);
    assert!(run.out.status.success(), "{}", run.stderr());
    let per_kernel = summary_gflops(&run.stdout());
    assert_eq!(per_kernel.len(), 8);
    let csv = run.file("r.csv");
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 16, "two levels per kernel");
    let mut seen = Vec::new();
    for (i, want) in per_kernel.iter().enumerate() {
        // Largest count; ties go to the first in Precision::ALL order.
        let mut best = 0;
        for j in 1..5 {
            if want[j] > want[best] {
                best = j;
            }
        }
        let precision = Precision::ALL[best];
        for row in &rows[2 * i..2 * i + 2] {
            assert_eq!(&row[5], precision.label(), "kernel {i}: {row:?}");
            let gflops: f64 = row[9].parse().unwrap();
            assert!(gflops > 0.0, "kernel {i}: {row:?}");
            assert!(
                (gflops - want[best]).abs() <= 1e-9 * want[best],
                "kernel {i}: {gflops} vs {}",
                want[best]
            );
            let roof: f64 = row[11].parse().unwrap();
            assert!(roof <= pvc().peak(precision), "kernel {i}: roof {roof}");
            assert!(matches!(&row[13], "memory" | "compute"), "{row:?}");
            assert_eq!(&row[15], "yes", "kernel {i} not plotted");
        }
        seen.push(precision);
    }
    assert!(seen.contains(&Precision::Fp16Xmx));
    assert!(seen.contains(&Precision::Fp32));
    assert!(seen.contains(&Precision::Fp16));
    let html = run.file("r.html");
    assert!(
        !html.contains("no operations"),
        "a kernel without its precision"
    );
    assert!(!html.contains(">n/a<"), "a kernel without a bound");
    // One compute roof per precision with operations (FP64 and BF16_XMX
    // dominate no kernel but have operations), in the precision's colour.
    for p in Precision::ALL {
        let roof = format!("class=\"roof compute\" data-precision=\"{}\"", p.label());
        assert_eq!(html.matches(&roof).count(), 1, "{roof}");
        let item = format!("class=\"legend-item\" data-precision=\"{}\"", p.label());
        assert_eq!(html.matches(&item).count(), 1, "{item}");
    }
    // Every marker is in its kernel's precision colour.
    let group =
        Regex::new(r#"<g class="kernel" data-k="(\d+)" data-precision="([A-Z0-9_]+)">"#).unwrap();
    let groups: Vec<(String, String)> = group
        .captures_iter(&html)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    assert_eq!(groups.len(), 8);
    for (k, p) in groups {
        let i: usize = k.parse().unwrap();
        assert_eq!(p, seen[i].label(), "kernel {k}");
    }
}

/// The tick labels of one axis, low to high.
fn ticks(svg: &str, axis: &str) -> Vec<f64> {
    let re = Regex::new(&format!(r#"<text class="{axis}-tick"[^>]*>([^<]+)</text>"#)).unwrap();
    re.captures_iter(svg)
        .map(|c| c[1].parse().unwrap())
        .collect()
}

#[test]
fn axes_span_whole_decades_around_the_data_with_headroom() {
    let run = mixed(&["--device", "pvc", "--output", "r", "--data", "r.csv"]);
    assert!(run.out.status.success(), "{}", run.stderr());
    let dev = pvc();
    let csv = run.file("r.csv");
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for row in rdr.records().map(Result::unwrap) {
        xs.push(row[8].parse::<f64>().unwrap());
        ys.push(row[9].parse::<f64>().unwrap());
    }
    // Every precision has operations here: its peak is on the chart and
    // its ridge with each level is inside the x range.
    for p in Precision::ALL {
        ys.push(dev.peak(p));
        for l in &dev.levels {
            xs.push(dev.peak(p) / l.bandwidth_gb_per_s);
        }
    }
    let lo = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let want = |lo: f64, hi: f64| {
        (
            10f64.powf((lo / 2.0).log10().floor()),
            10f64.powf((hi * 2.0).log10().ceil()),
        )
    };
    let svg = run.file("r.html");
    let (x, y) = (ticks(&svg, "x"), ticks(&svg, "y"));
    let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-9;
    let (wx0, wx1) = want(lo(&xs), hi(&xs));
    let (wy0, wy1) = want(lo(&ys), hi(&ys));
    assert!(
        close(x[0], wx0) && close(*x.last().unwrap(), wx1),
        "x ticks {x:?}"
    );
    assert!(
        close(y[0], wy0) && close(*y.last().unwrap(), wy1),
        "y ticks {y:?}"
    );
    // One tick per decade.
    for w in x.windows(2).chain(y.windows(2)) {
        assert!(close(w[1], w[0] * 10.0), "{w:?}");
    }
    // Not the original's fixed 0.001..100000 and 0.1..1000000.
    assert!(x[0] > 0.001 && *x.last().unwrap() < 100000.0, "{x:?}");
    assert!(y[0] > 0.1, "{y:?}");
    // Headroom: no point within a factor of 2 of the frame.
    assert!(lo(&xs) >= 2.0 * x[0] && hi(&xs) * 2.0 <= *x.last().unwrap());
}

#[test]
fn points_of_one_kernel_are_joined_across_memory_levels() {
    let run = mixed(&["--device", "pvc", "--output", "r", "--format", "svg"]);
    assert!(run.out.status.success(), "{}", run.stderr());
    let svg = run.file("r.svg");
    let join = Regex::new(r#"<polyline class="join" data-k="(\d+)" points="([^"]+)""#).unwrap();
    let circle =
        Regex::new(r#"class="point level-l3[^"]*" data-k="(\d+)"[^>]*cx="([^"]+)" cy="([^"]+)""#)
            .unwrap();
    let square = Regex::new(
        r#"class="point level-gpu_memory[^"]*" data-k="(\d+)"[^>]*x="([^"]+)" y="([^"]+)" width="([^"]+)""#,
    )
    .unwrap();
    let joins: Vec<_> = join.captures_iter(&svg).collect();
    assert_eq!(joins.len(), 8, "one join line per kernel");
    for j in joins {
        let k = &j[1];
        let pts: Vec<(f64, f64)> = j[2]
            .split(' ')
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        assert_eq!(pts.len(), 2, "kernel {k}: one vertex per level");
        // Same GFLOP/s at every level: a horizontal line, left to right.
        assert!((pts[0].1 - pts[1].1).abs() < 0.01, "kernel {k}: {pts:?}");
        assert!(pts[0].0 <= pts[1].0, "kernel {k}: {pts:?}");
        // Its vertices are the centres of the kernel's L3 circle and
        // GPU-memory square.
        let c = circle.captures_iter(&svg).find(|c| &c[1] == k).unwrap();
        let (cx, cy): (f64, f64) = (c[2].parse().unwrap(), c[3].parse().unwrap());
        let s = square.captures_iter(&svg).find(|c| &c[1] == k).unwrap();
        let half: f64 = s[4].parse::<f64>().unwrap() / 2.0;
        let (sx, sy) = (
            s[2].parse::<f64>().unwrap() + half,
            s[3].parse::<f64>().unwrap() + half,
        );
        for (x, y) in [(cx, cy), (sx, sy)] {
            assert!(
                pts.iter()
                    .any(|p| (p.0 - x).abs() < 0.02 && (p.1 - y).abs() < 0.02),
                "kernel {k}: marker ({x}, {y}) not on {pts:?}"
            );
        }
    }
    // Exactly one binding (outlined) marker per kernel.
    assert_eq!(svg.matches(" binding\"").count(), 8);
}

#[test]
fn the_longest_kernels_are_labelled_in_the_svg() {
    let run = mixed(&[
        "--device", "pvc", "--output", "r", "--format", "svg", "--labels", "3",
    ]);
    assert!(run.out.status.success(), "{}", run.stderr());
    let svg = run.file("r.svg");
    let label = Regex::new(
        r#"<text class="label" data-k="(\d+)"[^>]* x="([^"]+)" y="([^"]+)"[^>]*>([^<]+)</text>"#,
    )
    .unwrap();
    let got: Vec<(String, f64, f64, String)> = label
        .captures_iter(&svg)
        .map(|c| {
            (
                c[1].to_string(),
                c[2].parse().unwrap(),
                c[3].parse().unwrap(),
                c[4].to_string(),
            )
        })
        .collect();
    // Kernels are numbered longest first.
    let ks: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
    assert_eq!(ks, ["0", "1", "2"]);
    let names: Vec<&str> = got.iter().map(|g| g.3.as_str()).collect();
    assert_eq!(names, ["hgemm_caller", "gen_conv", "main::{lambda#4}"]);
    for (i, a) in got.iter().enumerate() {
        for b in &got[i + 1..] {
            assert!(
                (a.1 - b.1).abs() > 1.0 || (a.2 - b.2).abs() > 12.0,
                "labels on top of each other: {a:?} {b:?}"
            );
        }
    }
    let run = mixed(&[
        "--device", "pvc", "--output", "r", "--format", "svg", "--labels", "0",
    ]);
    assert!(!run.file("r.svg").contains("class=\"label\""));
    // The default labels five.
    let run = mixed(&["--device", "pvc", "--output", "r", "--format", "svg"]);
    assert_eq!(
        run.file("r.svg").matches("<text class=\"label\"").count(),
        5
    );
}

#[test]
fn device_names_select_the_bundled_configs() {
    for (name, shown) in [
        ("pvc", "PVC_1tile"),
        ("pvc_2tile", "PVC_2tile"),
        ("bmg_b580", "BMG_B580"),
        ("PVC.json", "PVC_1tile"),
    ] {
        let run = mixed(&["--device", name, "--output", "r"]);
        assert!(run.out.status.success(), "{name}: {}", run.stderr());
        assert!(
            run.file("r.html").contains(&format!("roofline on {shown}")),
            "{name}"
        );
    }
    // The same numbers as the file.
    let by_name = mixed(&["--device", "pvc", "--output", "r", "--data", "r.csv"]);
    let by_file = mixed(&[
        "--device",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../device_configs/pvc.json")
            .to_str()
            .unwrap(),
        "--output",
        "r",
        "--data",
        "r.csv",
    ]);
    assert_eq!(by_name.file("r.csv"), by_file.file("r.csv"));
    assert_eq!(by_name.stdout(), by_file.stdout());
    // Anything else: one line naming it and the bundled names, no output.
    let run = mixed(&["--device", "pvc3", "--output", "r"]);
    assert_eq!(run.out.status.code(), Some(1));
    assert_eq!(
        run.stderr(),
        "roofline: pvc3: no such device file, and not a bundled device name (pvc, pvc_2tile, bmg_b580)\n"
    );
    assert!(!run.dir.path().join("r.html").exists());
}
