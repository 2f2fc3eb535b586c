//! Report validity in query metric files (docs/analyze.md#report-validity):
//! flagged reports left out of charts, `--data` and the server, one
//! warning per file, `--keep-invalid` / `--strict`, `-l` untouched.
//!
//! `testdata/metrics/validity/validity_bmg.csv`: generated data (`--seed 6 metrics
//! --validity-columns --devices 1 --kernels 3 --instances 6`; of its 18
//! reports, gen_conv #1 (`ReportError=16, ReportWithoutWorkload=16`) and
//! gen_conv #5 (`ReportError=1, ReportLost=1`) are invalid (one of them
//! also has `CoreFrequencyChanged`), 11 are doubtful.

use crate::common::stderr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_analyze")
}

fn input() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/metrics/validity/validity_bmg.csv")
}

const K_CONV: &str = "gen_conv[SIMD16 {28; 28; 8} {16; 1; 1}]";

fn run(cwd: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("analyze runs")
}

/// Draws every instance (`-i 0`) with `extra` options; returns the run
/// and the `--data` file's lines.
fn draw_all(extra: &[&str]) -> (Output, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let input = input();
    let mut args = vec![
        "-o",
        "c.svg",
        "--data",
        "d.csv",
        "-i",
        "0",
        "-m",
        "GpuTime[ns]",
        "-y",
        "t",
    ];
    args.extend_from_slice(extra);
    args.push(input.to_str().unwrap());
    let out = run(dir.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    let data = std::fs::read_to_string(dir.path().join("d.csv")).unwrap();
    (out, data.lines().map(str::to_string).collect())
}

fn instances_of(data: &[String], kernel: &str) -> Vec<String> {
    data.iter()
        .filter(|l| l.starts_with(kernel))
        .map(|l| l[kernel.len() + 1..].split(',').next().unwrap().to_string())
        .collect()
}

#[test]
fn invalid_reports_are_left_out_with_one_warning() {
    let (out, data) = draw_all(&[]);
    let err = stderr(&out);
    let warnings: Vec<&str> = err.lines().collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert_eq!(
        warnings[0],
        format!(
            "analyze: warning: {}: 2 of 18 reports left out: ReportError/ReportLost/\
             ReportWithoutWorkload/CoreFrequencyChanged; --keep-invalid keeps them; 11 of 18 \
             reports doubtful, kept: CoreFrequencyChanged/ReportCtxSwitchLost; --strict leaves \
             them out",
            input().display()
        )
    );
    // The file has validity columns: --data says which kept reports are
    // doubtful; instances keep their ordinals.
    assert_eq!(data[0], "kernel,instance,sample,metric,value,report");
    assert_eq!(instances_of(&data, K_CONV), ["2", "3", "4", "6"]);
    assert_eq!(data.len() - 1, 16);
    let doubtful = data.iter().filter(|l| l.ends_with(",doubtful")).count();
    assert_eq!(doubtful, 11);
    assert!(data[1..]
        .iter()
        .all(|l| l.ends_with(",valid") || l.ends_with(",doubtful")));
}

#[test]
fn keep_invalid_keeps_all_and_marks_them() {
    let (out, data) = draw_all(&["--keep-invalid"]);
    assert!(
        stderr(&out).contains("2 of 18 reports flagged invalid (ReportError/ReportLost/ReportWithoutWorkload/CoreFrequencyChanged), kept as --keep-invalid asks"),
        "{}",
        stderr(&out)
    );
    assert_eq!(data.len() - 1, 18);
    assert_eq!(instances_of(&data, K_CONV), ["1", "2", "3", "4", "5", "6"]);
    assert_eq!(data.iter().filter(|l| l.ends_with(",invalid")).count(), 2);
}

#[test]
fn strict_leaves_out_doubtful_reports_too() {
    let (out, data) = draw_all(&["--strict"]);
    assert!(
        stderr(&out).contains(": 13 of 18 reports left out: "),
        "{}",
        stderr(&out)
    );
    assert_eq!(data.len() - 1, 5);
    assert!(data[1..].iter().all(|l| l.ends_with(",valid")));
}

#[test]
fn keep_invalid_and_strict_together_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = input();
    let out = run(
        dir.path(),
        &[
            "-o",
            "c.pdf",
            "--keep-invalid",
            "--strict",
            input.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_wanted_instance_that_is_left_out_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let input = input();
    let one = run(
        dir.path(),
        &[
            "-o",
            "c.pdf",
            "-k",
            K_CONV,
            "-i",
            "5",
            "-m",
            "GpuTime[ns]",
            "-y",
            "t",
            input.to_str().unwrap(),
        ],
    );
    assert!(!one.status.success());
    assert!(
        stderr(&one).contains(&format!(
            "No metric data for instance 5 of kernel {K_CONV}: its query report is flagged and left out; --keep-invalid keeps it"
        )),
        "{}",
        stderr(&one)
    );
    assert!(!dir.path().join("c.pdf").exists());
    // Mode B (instance 1 of every kernel): the others are drawn.
    let each = run(
        dir.path(),
        &[
            "-o",
            "c.pdf",
            "-m",
            "GpuTime[ns]",
            "-y",
            "t",
            input.to_str().unwrap(),
        ],
    );
    assert!(each.status.success(), "{}", stderr(&each));
    let stdout = String::from_utf8_lossy(&each.stdout);
    assert!(
        stdout.contains(&format!(
            "No metric data for instance 1 of kernel {K_CONV}: its query report is flagged and left out"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("Analyzed kernel triton_poi_fused_add_0"),
        "{stdout}"
    );
}

#[test]
fn listing_is_untouched_by_validity() {
    let dir = tempfile::tempdir().unwrap();
    let input = input();
    let out = run(dir.path(), &["-l", input.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(stderr(&out), "");
    let text = String::from_utf8_lossy(&out.stdout);
    // Flagged reports are still counted (the original's listing).
    assert!(
        text.contains(&format!("        \"{K_CONV}\", 6\n")),
        "{text}"
    );
    assert!(text.contains("        ReportError\n"), "{text}");
}

#[test]
fn the_chart_server_leaves_out_flagged_reports() {
    use crate::server_common::{get, link, Server};
    let input = input();
    let server = Server::analyze(&[
        "-q",
        "-m",
        "GpuTime[ns]",
        "-y",
        "t",
        input.to_str().unwrap(),
    ]);
    // gen_conv #1 (GlobalInstanceId 7) is flagged ReportWithoutWorkload.
    let flagged = get(server.port(), &link(K_CONV, 7));
    assert_eq!(
        flagged.text(),
        "No metric data for instance 7: its query report is flagged and left out; --keep-invalid keeps it"
    );
    let main = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";
    let valid = get(server.port(), &link(main, 3));
    assert_eq!(valid.status, 200, "{}", valid.text());
    assert!(valid.body.starts_with(b"%PDF-"));
    let (_, _) = server.interrupt();

    let kept = Server::analyze(&[
        "-q",
        "--keep-invalid",
        "-m",
        "GpuTime[ns]",
        "-y",
        "t",
        input.to_str().unwrap(),
    ]);
    let response = get(kept.port(), &link(K_CONV, 7));
    assert_eq!(response.status, 200, "{}", response.text());
    assert!(response.body.starts_with(b"%PDF-"));
}
