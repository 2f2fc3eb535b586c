//! Loads the generated page in headless Chromium (Debian package
//! `chromium`, installed by scripts/test.sh) with the network disabled and
//! checks that the script ran without a console message or error and that
//! every kernel above the threshold got one dot per memory level.
//!
//! Without Chromium these tests FAIL (they do not skip): the page's script
//! is part of the product and must be exercised.

use std::path::{Path, PathBuf};
use std::process::Command;

use unitrace_system_tests::{chromium_load, ChromiumLoad};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/roofline")
        .join(name)
}

/// Loads `page` headless, offline (every host resolves to nothing and any
/// proxied request goes to a closed port), in a fresh profile: the DOM
/// after the scripts ran and the console lines from the log.
fn load(page: &Path) -> ChromiumLoad {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let offline = [
        "--disable-extensions",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=127.0.0.1:9",
        "--virtual-time-budget=5000",
    ];
    chromium_load(&url, &offline, true)
}

/// Value of attribute `name` of the element with id `id` in a dumped DOM.
fn attr(dom: &str, id: &str, name: &str) -> Option<String> {
    let start = dom.find(&format!("id=\"{id}\""))?;
    let tag_start = dom[..start].rfind('<')?;
    let tag_end = start + dom[start..].find('>')?;
    let tag = &dom[tag_start..tag_end];
    let key = format!(" {name}=\"");
    let i = tag.find(&key)? + key.len();
    let j = tag[i..].find('"')?;
    Some(tag[i..i + j].to_string())
}

/// Kernels above the time threshold with a non-zero count of the plotted
/// precision, per level, from the `--data` file (each has `plotted=yes`
/// when its AI is finite).
fn expected_points(csv_path: &Path) -> (usize, usize) {
    let mut rdr = csv::Reader::from_path(csv_path).unwrap();
    let (mut l3, mut gm) = (0, 0);
    for rec in rdr.records() {
        let rec = rec.unwrap();
        let pct: f64 = rec[3].parse().unwrap();
        let ops: f64 = rec[6].parse().unwrap();
        let bytes: f64 = rec[7].parse().unwrap();
        if pct > 0.001 && ops > 0.0 && bytes > 0.0 {
            match &rec[1] {
                "l3" => l3 += 1,
                "gpu_memory" => gm += 1,
                other => panic!("unexpected level {other}"),
            }
        }
    }
    (l3, gm)
}

fn render(compute: &str, memory: &str, dir: &Path) -> (PathBuf, PathBuf) {
    let page = dir.join("page.html");
    let csv = dir.join("page.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_roofline"))
        .arg("--compute")
        .arg(data(compute))
        .arg("--memory")
        .arg(data(memory))
        .arg("--device")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../device_configs/pvc.json"))
        .arg("--output")
        .arg(&page)
        .arg("--data")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (page, csv)
}

#[test]
fn page_runs_offline_and_plots_every_kernel_above_the_threshold() {
    for (c, m) in [
        ("sample_compute.txt", "sample_memory.txt"),
        ("gen_new_compute.txt", "gen_new_memory.txt"),
        ("gemm_fp16_flops.1799853", "gemm_fp16_bytes.1799860"),
        ("gen_mixed_compute.txt", "gen_mixed_memory.txt"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (page, csv) = render(c, m, dir.path());
        let (l3, gm) = expected_points(&csv);
        assert!(l3 > 0, "{c}: test input plots nothing");
        let got = load(&page);
        assert!(
            got.console.is_empty(),
            "{c}: console output: {:?}",
            got.console
        );
        let status = |name: &str| attr(&got.dom, "roofline-status", name);
        assert_eq!(
            status("data-ready").as_deref(),
            Some("1"),
            "{c}: script did not finish"
        );
        assert_eq!(status("data-errors").as_deref(), Some("0"), "{c}");
        assert_eq!(
            status("data-points-l3"),
            Some(l3.to_string()),
            "{c}: L3 dots"
        );
        assert_eq!(
            status("data-points-gpu_memory"),
            Some(gm.to_string()),
            "{c}: GPU-memory dots"
        );
        assert_eq!(status("data-points"), Some((l3 + gm).to_string()), "{c}");
        // Every dot has its table row (the hover box takes the name there),
        // and sorting by time puts the longest kernel (index 0) first.
        assert_eq!(status("data-unmatched").as_deref(), Some("0"), "{c}");
        assert_eq!(status("data-first-row").as_deref(), Some("0"), "{c}");
    }
}

/// The checker itself notices a failing script (so a green run means
/// something).
#[test]
fn a_script_error_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><div id=\"roofline-status\"></div><script>undefinedFunction();</script></body></html>",
    )
    .unwrap();
    let got = load(&page);
    assert!(!got.console.is_empty(), "a thrown error was not seen");
    assert_eq!(attr(&got.dom, "roofline-status", "data-ready"), None);
}
