//! Finding a kernel and a metric without typing its full name
//! (docs/compatibility.md#analyze-closest-kernel): `-k` takes a unique part of a
//! name or a `/regex/`, an ambiguous one lists the candidates, unknown names
//! get suggestions, for metric and stall files alike.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const K_MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";
const K_CONV: &str = "gen_conv[SIMD16 {28; 28; 8} {16; 1; 1}]";

fn testdata(path: &str) -> String {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(path);
    p.to_str().unwrap().to_string()
}

fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_analyze"))
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("analyze runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn metric_run(dir: &Path, extra: &[&str]) -> Output {
    let sampling = testdata("charts/sampling.csv");
    let mut args = vec![sampling.as_str(), "-m", "XVE_ACTIVE[%]", "-y", "A"];
    args.extend_from_slice(extra);
    run_in(dir, &args)
}

/// Asserts a one-line failure containing `part`, with no output file left.
fn assert_fails(dir: &Path, out: &Output, part: &str) {
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("analyze: "), "{err}");
    assert!(err.contains(part), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir).unwrap().collect();
    assert!(left.is_empty(), "no output: {left:?}");
}

#[test]
fn a_unique_part_or_regex_draws_the_same_pages_as_the_full_name() {
    let dir = tempfile::tempdir().unwrap();
    let full = metric_run(dir.path(), &["-k", K_MAIN, "-i", "0", "-o", "full.svg"]);
    assert!(full.status.success(), "{}", text(&full.stderr));
    let expected = std::fs::read(dir.path().join("full.svg")).unwrap();
    for wanted in ["lambda", "LAMBDA(auto", "/^main.*4096/"] {
        let out = metric_run(dir.path(), &["-k", wanted, "-i", "0", "-o", "part.svg"]);
        assert!(out.status.success(), "{wanted}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), text(&full.stdout), "{wanted}");
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
        let drawn = std::fs::read(dir.path().join("part.svg")).unwrap();
        assert!(drawn == expected, "{wanted}: same pages as the full name");
    }
    // Mode D names the resolved kernel in its message.
    let out = metric_run(dir.path(), &["-k", "conv", "-i", "1", "-o", "one.pdf"]);
    assert!(out.status.success());
    assert!(
        text(&out.stdout).contains(&format!("instance 1 of kernel {K_CONV} has been")),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn an_ambiguous_part_lists_the_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let out = metric_run(dir.path(), &["-k", "SIMD", "-o", "a.pdf"]);
    assert_fails(
        dir.path(),
        &out,
        &format!("-k SIMD matches 2 kernels; give more of the name or a /regex/: \"{K_MAIN}\", \"{K_CONV}\""),
    );
    let out = metric_run(dir.path(), &["-k", "/(/", "-o", "a.pdf"]);
    assert_fails(dir.path(), &out, "-k /(/: not a valid regular expression");
}

#[test]
fn unknown_names_get_suggestions() {
    let dir = tempfile::tempdir().unwrap();
    let out = metric_run(dir.path(), &["-k", "gen_cnov", "-o", "a.pdf"]);
    assert_fails(
        dir.path(),
        &out,
        &format!("No metric data for kernel gen_cnov; closest names: \"{K_CONV}\", \"{K_MAIN}\""),
    );
    let sampling = testdata("charts/sampling.csv");
    let out = run_in(
        dir.path(),
        &[&sampling, "-m", "XVE_ACTIVE", "-y", "A", "-o", "a.pdf"],
    );
    assert_fails(
        dir.path(),
        &out,
        "No metric data for XVE_ACTIVE; did you mean \"XVE_ACTIVE[%]\"?",
    );
    let out = metric_run(dir.path(), &["-b", "GPU_MEMORY_BYTE_READ", "-o", "a.pdf"]);
    assert_fails(
        dir.path(),
        &out,
        "No throughput data for GPU_MEMORY_BYTE_READ; did you mean \"GPU_MEMORY_BYTE_READ[bytes]\"?",
    );
    // Nothing close: the message stays the original's.
    let out = metric_run(dir.path(), &["-b", "NOPE[x]", "-o", "a.pdf"]);
    let err = text(&out.stderr);
    assert!(
        err.trim_end().ends_with("No throughput data for NOPE[x]"),
        "{err}"
    );
}

#[test]
fn stall_files_find_kernels_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let stalls = testdata("stall_report/src/stalls.csv");
    let run = |k: &str, out: &str| run_in(dir.path(), &[&stalls, "-k", k, "-o", out]);
    let full = run("triton_poi_fused_add_0", "full.svg");
    assert!(full.status.success(), "{}", text(&full.stderr));
    let part = run("poi_fused", "part.svg");
    assert!(part.status.success(), "{}", text(&part.stderr));
    assert!(
        std::fs::read(dir.path().join("full.svg")).unwrap()
            == std::fs::read(dir.path().join("part.svg")).unwrap()
    );
    std::fs::remove_file(dir.path().join("full.svg")).unwrap();
    std::fs::remove_file(dir.path().join("part.svg")).unwrap();
    let out = run("/^(gen|main)/", "a.pdf");
    assert_fails(
        dir.path(),
        &out,
        "-k /^(gen|main)/ matches 2 kernels; give more of the name or a /regex/: \"gen_conv\", \"main::{lambda(auto:1)#4}\"",
    );
    let out = run("gen_cnov", "a.pdf");
    assert_fails(
        dir.path(),
        &out,
        "No metric data for kernel gen_cnov; closest names: \"gen_conv\"",
    );
}
