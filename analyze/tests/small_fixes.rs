//! Two smaller fixes of analyze (docs/compatibility.md#analyze-throughput-label,
//! docs/compatibility.md#analyze-many-pages): a unit-correct throughput label and a
//! word on stderr before a run writes more than 1,000 pages. (The stall
//! `--data` IP column is checked in
//! `stall_report::data_file_holds_the_plotted_stall_series`.)

use std::path::Path;
use std::process::{Command, Output};

fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_analyze"))
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("analyze runs")
}

fn sampling() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/charts/sampling.csv");
    p.to_str().unwrap().to_string()
}

/// The `<text>` contents of an SVG.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text ")
        .skip(1)
        .map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string())
        .collect()
}

#[test]
fn throughput_label_follows_the_unit() {
    let dir = tempfile::tempdir().unwrap();
    let sampling = sampling();
    let draw = |b: &str| {
        let out = run_in(
            dir.path(),
            &[
                &sampling,
                "-k",
                "gen_conv",
                "-m",
                "XVE_ACTIVE[%]",
                "-y",
                "A",
                "-b",
                b,
                "-o",
                "t.svg",
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let svg = std::fs::read_to_string(dir.path().join("t.svg")).unwrap();
        // The throughput page is the second one.
        let page = svg.split("<svg x=\"0\"").nth(2).unwrap().to_string();
        svg_texts(&page)
    };
    // Bytes per ns are GB/s: the original's label.
    let bytes = draw("GPU_MEMORY_BYTE_READ[bytes],GPU_MEMORY_BYTE_WRITE[bytes]");
    assert!(bytes.iter().any(|t| t == "Throughput(GB/s)"), "{bytes:?}");
    // Events per ns are not.
    let events = draw("XVE_BUSY[events]");
    assert!(
        events.iter().any(|t| t == "Throughput(Gevents/s)"),
        "{events:?}"
    );
    assert!(!events.iter().any(|t| t.contains("GB/s")), "{events:?}");
}

/// A metric file of `instances` one-row instances (a blank line ends an
/// instance; kernels alternate).
fn many_instances(path: &Path, instances: usize) {
    let mut text = String::from("\n=== Device #0 Metrics ===\n\nKernel, GpuTime[ns], A[%]\n");
    for i in 0..instances {
        let kernel = if i % 2 == 0 { "even" } else { "odd" };
        text.push_str(&format!("\"{kernel}\", 100, {}\n\n", i % 7));
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_run_of_more_than_1000_pages_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    many_instances(&dir.path().join("big.csv"), 1100);
    let out = run_in(
        dir.path(),
        &[
            "big.csv", "-i", "0", "-m", "A[%]", "-y", "A", "-o", "all.svg",
        ],
    );
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    let line = err.lines().next().unwrap();
    assert!(
        line.starts_with("analyze: warning: all.svg: writing about "),
        "{line}"
    );
    let estimate: u64 = line["analyze: warning: all.svg: writing about ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!((1000..=1200).contains(&estimate), "{line}");
    let svg = std::fs::read_to_string(dir.path().join("all.svg")).unwrap();
    assert_eq!(svg.matches("<svg x=\"0\"").count(), 1100);

    // 1,000 pages exactly: no word.
    many_instances(&dir.path().join("small.csv"), 1000);
    let out = run_in(
        dir.path(),
        &[
            "small.csv",
            "-i",
            "0",
            "-m",
            "A[%]",
            "-y",
            "A",
            "-o",
            "all.svg",
        ],
    );
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
