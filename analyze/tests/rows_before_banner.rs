//! Rows before the first `=== Device #N Metrics ===` banner of a metric
//! file that has banners (docs/robustness.md#metric-csvs):
//! they belong to no device, so every mode drops them with one warning
//! line, decided in the one pass it makes over the file. A file without
//! any banner is still device 0 (docs/compatibility.md#analyze-quirk-15).
//!
//! `rows_before_banner.csv` is `sampling.csv` with a header and two rows
//! of `early_kernel` (GlobalInstanceId 999) before its banner, so every
//! output must equal the one of `sampling.csv`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{stderr, stdout};
use crate::server_common::{get, link, Server};

const K_MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";
const EARLY: &str = "early_kernel[SIMD16 {1; 1; 1} {16; 1; 1}]";
const WARNING: &str = "analyze: warning: rows_before_banner.csv:1: rows before the first device banner belong to no device; dropped\n";

fn charts_testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/charts")
        .join(name)
}

/// Runs analyze in `dir` (where the input is copied, so messages name it
/// without a folder).
fn analyze(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_analyze"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// A folder holding `sampling.csv`, `rows_before_banner.csv`,
/// `nobanner.csv` and `main_first.csv`: `sampling.csv` after its own
/// header and first two rows (instance 1 of its first kernel, which mode
/// D finds before the banner).
fn inputs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["sampling.csv", "rows_before_banner.csv", "nobanner.csv"] {
        std::fs::copy(charts_testdata(name), dir.path().join(name)).unwrap();
    }
    let text = std::fs::read_to_string(charts_testdata("sampling.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[3].starts_with("Kernel,") && lines[4].contains("lambda"));
    let early = format!("{}\n\n{text}", lines[3..6].join("\n"));
    std::fs::write(dir.path().join("main_first.csv"), early).unwrap();
    dir
}

/// `analyze INPUT ARGS -o INPUT.pdf --data INPUT.data.csv` on both inputs:
/// the outputs and messages must be the same, the second run warns once.
fn same_as_without_early_rows(args: &[&str]) {
    same_as_without_early_rows_in("rows_before_banner.csv", args);
}

fn same_as_without_early_rows_in(early_input: &str, args: &[&str]) {
    let dir = inputs();
    let mut results = Vec::new();
    for input in ["sampling.csv", early_input] {
        let pdf = format!("{input}.pdf");
        let data = format!("{input}.data.csv");
        let mut all = vec![input];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", &pdf, "--data", &data]);
        let out = analyze(dir.path(), &all);
        assert!(out.status.success(), "{input} {args:?}: {}", stderr(&out));
        let data = std::fs::read_to_string(dir.path().join(&data)).unwrap();
        assert!(!data.contains("early_kernel"), "{data}");
        results.push((stdout(&out), stderr(&out), data));
    }
    let (plain, early) = (&results[0], &results[1]);
    assert_eq!(plain.1, "", "{args:?}");
    let warning = WARNING.replace("rows_before_banner.csv", early_input);
    assert_eq!(early.1, warning, "{args:?}: exactly one warning line");
    assert_eq!(early.0, plain.0, "{args:?}: same messages");
    assert_eq!(early.2, plain.2, "{args:?}: same --data");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".unitrace-tmp."))
        .collect();
    assert!(names.is_empty(), "temporary files left: {names:?}");
}

#[test]
fn every_chart_mode_drops_rows_before_the_first_banner_with_one_warning() {
    // Modes A, B, C, D (docs/compatibility.md#analyze-instances).
    let m = ["-m", "XVE_ACTIVE[%],XVE_STALL[%]", "-y", "Percent"];
    let with = |extra: &[&'static str]| {
        let mut v: Vec<&str> = m.to_vec();
        v.extend_from_slice(extra);
        v
    };
    same_as_without_early_rows(&with(&["-i", "0"]));
    same_as_without_early_rows(&with(&["-i", "1", "-b", "GPU_MEMORY_BYTE_READ[bytes]"]));
    same_as_without_early_rows(&with(&["-k", K_MAIN, "-i", "0"]));
    same_as_without_early_rows(&with(&["-k", K_MAIN, "-i", "2"]));
    same_as_without_early_rows(&with(&["-k", K_MAIN, "-i", "1"]));
    // Mode D finds instance 1 of the kernel among the early rows and would
    // stop there; the banner that follows makes it read on and start over.
    same_as_without_early_rows_in("main_first.csv", &with(&["-k", K_MAIN, "-i", "1"]));
    same_as_without_early_rows_in("main_first.csv", &with(&["-i", "1"]));
    // `-k` as a part of the name reads the file twice: still one warning.
    same_as_without_early_rows(&with(&["-k", "lambda", "-i", "0"]));
}

#[test]
fn a_kernel_only_among_the_early_rows_is_not_found() {
    let dir = inputs();
    let out = analyze(
        dir.path(),
        &[
            "rows_before_banner.csv",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "P",
            "-k",
            EARLY,
            "-i",
            "1",
            "-o",
            "e.pdf",
            "--data",
            "e.csv",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let mut lines = err.lines();
    assert_eq!(lines.next(), Some(WARNING.trim_end()));
    let error = lines.next().unwrap();
    assert!(
        error.starts_with(&format!(
            "analyze: rows_before_banner.csv: No metric data for kernel {EARLY}"
        )),
        "{err}"
    );
    assert_eq!(lines.next(), None, "{err}");
    assert!(!dir.path().join("e.pdf").exists() && !dir.path().join("e.csv").exists());
    // Rows before the banner are not device 1 either.
    let out = analyze(
        dir.path(),
        &[
            "rows_before_banner.csv",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "P",
            "-d",
            "1",
            "-o",
            "e.pdf",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!("{WARNING}analyze: rows_before_banner.csv: Device 1 not found in input file\n")
    );
}

#[test]
fn a_file_without_banner_is_still_device_0_in_every_mode() {
    let dir = inputs();
    for extra in [
        &["-i", "0"][..],
        &["-k", K_MAIN, "-i", "1"],
        &["-k", K_MAIN],
    ] {
        let mut args = vec!["nobanner.csv", "-m", "XVE_ACTIVE[%]", "-y", "P"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", "n.pdf", "--data", "n.csv"]);
        let out = analyze(dir.path(), &args);
        assert!(out.status.success(), "{extra:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{extra:?}");
        let data = std::fs::read_to_string(dir.path().join("n.csv")).unwrap();
        assert_eq!(data.lines().count(), 4, "{extra:?}: three samples\n{data}");
    }
}

#[test]
fn the_listing_leaves_out_the_early_rows_with_the_same_warning() {
    let dir = inputs();
    let plain = analyze(dir.path(), &["-l", "sampling.csv"]);
    let early = analyze(dir.path(), &["-l", "rows_before_banner.csv"]);
    assert!(early.status.success());
    assert_eq!(stdout(&early), stdout(&plain));
    assert_eq!(stderr(&early), WARNING);
    assert_eq!(stderr(&plain), "");
}

#[test]
fn the_chart_server_does_not_index_the_early_rows() {
    let input = charts_testdata("rows_before_banner.csv");
    let mut server = Server::analyze(&[
        "-q",
        "-m",
        "XVE_ACTIVE[%]",
        "-y",
        "P",
        input.to_str().unwrap(),
    ]);
    let mut err_pipe = server.child.stderr.take().unwrap();
    let index = get(server.port(), "/").text();
    assert!(index.contains("main::{lambda"), "{index}");
    assert!(!index.contains("early_kernel"), "{index}");
    let early = get(server.port(), &link(EARLY, 999));
    assert_eq!(early.status, 404, "{}", early.text());
    let main = get(server.port(), &link(K_MAIN, 3));
    assert_eq!(main.status, 200, "{}", main.text());
    server.interrupt();
    let mut err = String::new();
    err_pipe.read_to_string(&mut err).unwrap();
    let warning = format!(
        "analyze: warning: {}:1: rows before the first device banner belong to no device; dropped",
        input.display()
    );
    assert_eq!(
        err.lines()
            .filter(|l| l.contains("rows before"))
            .collect::<Vec<_>>(),
        [warning.as_str()],
        "{err}"
    );
}
