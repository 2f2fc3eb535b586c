//! Stall-to-source report (`analyze -s DUMP [-r FILE] [-n N] [-g PROG]`)
//! against the original analyzeperfmetrics.py, on the golden inputs of
//! `testdata/stall_report/` (see its README for how they were made).
//!
//! Our report must equal the original's line by line, except for these
//! deliberate fixes of docs/compatibility.md#analyze, each checked here:
//! * docs/compatibility.md#analyze-quirk-13: equal stall counts keep their file order (the original's
//!   pandas sort is unstable): `same_modulo_tie_order` checks that the
//!   reports list the same counts in the same order and identical entries
//!   for every address they both list; `report.fixed.txt` pins ours;
//! * docs/compatibility.md#analyze-quirk-11: the dump folder is never written to (`dump_unchanged`), so a
//!   dump without addresses is annotated in memory and the report names the
//!   `.asm` rather than the `.asm.ip` the original wrote;
//! * docs/compatibility.md#analyze-quirk-16: the `-r` file is only created when a report is written;
//! * docs/compatibility.md#analyze-quirk-17: errors exit non-zero;
//! * docs/compatibility.md#analyze-quirk-5, #analyze-quirk-6: multi-device files and digit-only IPs work.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{stderr, stdout};
use unitrace_core::stall_csv::{CsvReader, StallReader, StallRow};
use unitrace_core::stall_report::{serde_json, STALL_NAMES};
use unitrace_system_tests::expected;

fn testdata(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/stall_report")
        .join(case)
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A temporary working directory holding a copy of a case's dump as `dump/`
/// (the report prints the dump path as given, so the original was run the
/// same way).
struct Work {
    dir: tempfile::TempDir,
}

impl Work {
    fn new(case: &str) -> Work {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&testdata(case).join("dump"), &dir.path().join("dump"));
        Work { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_analyze"))
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Every file of a folder with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn csv_arg(case: &str) -> String {
    testdata(case)
        .join("stalls.csv")
        .to_string_lossy()
        .into_owned()
}

/// Stall rows per kernel name (all runs of the first section).
fn rows_by_kernel(csv: &Path) -> BTreeMap<String, Vec<StallRow>> {
    let file = fs::File::open(csv).unwrap();
    let mut out: BTreeMap<String, Vec<StallRow>> = BTreeMap::new();
    for run in StallReader::new(CsvReader::new(file, csv)) {
        let run = run.unwrap();
        out.entry(run.kernel).or_default().extend(run.rows);
    }
    out
}

/// One entry of a report: section name, address of the instruction, text.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    kernel: String,
    section: String,
    address: u64,
    text: String,
}

/// Splits a report into its non-entry lines and its entries.
fn parse_report(text: &str) -> (Vec<String>, Vec<Entry>) {
    let mut frame = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    let mut kernel = String::new();
    let mut section = String::new();
    let mut in_entry = false;
    let lines: Vec<&str> = text.split('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(k) = line.strip_prefix("Kernel: ") {
            kernel = k.to_string();
            in_entry = false;
        }
        if let Some(s) = line.strip_suffix(" Stalls: ") {
            section = s.to_string();
            in_entry = false;
        }
        if line.starts_with("****") || line.starts_with("====") {
            in_entry = false;
        }
        if line.is_empty() && lines.get(i + 1) == Some(&"Instruction") {
            let ins = lines[i + 2];
            let hex = &ins[ins.find('[').unwrap() + 1..ins.find(']').unwrap()];
            entries.push(Entry {
                kernel: kernel.clone(),
                section: section.clone(),
                address: u64::from_str_radix(hex, 16).unwrap(),
                text: String::new(),
            });
            in_entry = true;
        }
        if in_entry {
            let e = entries.last_mut().unwrap();
            e.text.push_str(line);
            e.text.push('\n');
        } else {
            frame.push(line.to_string());
        }
        i += 1;
    }
    (frame, entries)
}

/// Checks that `ours` equals `orig` except for the order of entries with
/// equal counts (docs/compatibility.md#analyze-quirk-13) — including which of several tied entries a
/// `-n` limit keeps.
fn same_modulo_tie_order(ours: &str, orig: &str, csv: &Path) {
    let rows = rows_by_kernel(csv);
    let (frame_ours, entries_ours) = parse_report(ours);
    let (frame_orig, entries_orig) = parse_report(orig);
    assert_eq!(frame_ours, frame_orig, "report frame differs");
    assert_eq!(entries_ours.len(), entries_orig.len());
    let count = |e: &Entry| -> u64 {
        let t = STALL_NAMES.iter().position(|n| *n == e.section).unwrap();
        rows[&e.kernel]
            .iter()
            .find(|r| r.ip == e.address)
            .map(|r| r.counts[t])
            .unwrap()
    };
    let mut ties = 0;
    for (a, b) in entries_ours.iter().zip(&entries_orig) {
        assert_eq!((&a.kernel, &a.section), (&b.kernel, &b.section));
        assert_eq!(count(a), count(b), "count order differs at {a:?} / {b:?}");
        if a.address != b.address {
            ties += 1;
        }
    }
    // Every address both list is reported identically.
    for a in &entries_ours {
        for b in entries_orig
            .iter()
            .filter(|b| (&b.kernel, &b.section, b.address) == (&a.kernel, &a.section, a.address))
        {
            assert_eq!(a.text, b.text);
        }
    }
    // The fixture is meant to exercise ties.
    assert!(ties > 0 || ours == orig);
}

fn run_case(case: &str, extra: &[&str]) -> (Work, Output) {
    run_case_named(case, extra, "report.txt", "charts.pdf")
}

/// Runs a golden case with the output names the original was given (they
/// appear in the stdout messages).
fn run_case_named(case: &str, extra: &[&str], report: &str, pdf: &str) -> (Work, Output) {
    let work = Work::new(case);
    let before = snapshot(&work.path("dump"));
    let csv = csv_arg(case);
    let mut args: Vec<&str> = extra.to_vec();
    args.extend(["-s", "dump", "-r", report, "-o", pdf, &csv]);
    let out = work.run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    // Never write into the dump folder (docs/compatibility.md#analyze-quirk-11), byte for byte.
    assert_eq!(snapshot(&work.path("dump")), before, "dump folder changed");
    assert!(work.path(pdf).is_file());
    (work, out)
}

#[test]
fn source_markers_and_retried_kernel_match_original() {
    let (work, out) = run_case("src", &[]);
    let dir = testdata("src");
    assert_eq!(stdout(&out), read(&dir.join("stdout.orig.txt")));
    let ours = read(&work.path("report.txt"));
    assert_eq!(ours, expected::text(&dir.join("report.fixed.txt"), &ours));
    same_modulo_tie_order(
        &ours,
        &read(&dir.join("report.orig.txt")),
        &dir.join("stalls.csv"),
    );
    // The retry (`_1_`) compilation is the one used.
    assert!(ours.contains("dump/OCL_asmade519c0b0efd44d_1_simd16_entry_0001.asm\n"));
    assert!(ours.contains("Not found .asm file for gen_conv\n"));
    // The kernel without .asm gets a warning naming what the dump holds.
    assert!(stderr(&out).contains("no .asm file for kernel gen_conv"));
    assert!(stderr(&out).contains("triton_poi_fused_add_0"));
}

#[test]
fn one_kernel_with_top_3_matches_original_exactly() {
    let (work, out) = run_case_named(
        "src",
        &["-k", "main::{lambda(auto:1)#4}", "-n", "3"],
        "report_k.txt",
        "k.pdf",
    );
    let dir = testdata("src");
    assert_eq!(stdout(&out), read(&dir.join("stdout_k.orig.txt")));
    assert_eq!(
        read(&work.path("report_k.txt")),
        read(&dir.join("report_k.orig.txt"))
    );
}

#[test]
fn top_0_matches_original_exactly() {
    let (work, out) = run_case_named("src", &["-n", "0"], "report_n0.txt", "n0.pdf");
    let dir = testdata("src");
    assert_eq!(stdout(&out), read(&dir.join("stdout_n0.orig.txt")));
    assert_eq!(
        read(&work.path("report_n0.txt")),
        read(&dir.join("report_n0.orig.txt"))
    );
}

#[test]
fn no_source_markers_unlimited_matches_original() {
    let (work, out) = run_case("nosrc", &["-n", "-1"]);
    let dir = testdata("nosrc");
    assert_eq!(stdout(&out), read(&dir.join("stdout.orig.txt")));
    let ours = read(&work.path("report.txt"));
    assert_eq!(ours, expected::text(&dir.join("report.fixed.txt"), &ours));
    assert!(ours.contains("Report of Stalls of Each Type\n"));
    assert!(!ours.contains("Line "));
    same_modulo_tie_order(
        &ours,
        &read(&dir.join("report.orig.txt")),
        &dir.join("stalls.csv"),
    );
}

#[test]
fn unannotated_dump_is_annotated_in_memory() {
    let (work, out) = run_case("raw", &[]);
    let dir = testdata("raw");
    assert_eq!(stdout(&out), read(&dir.join("stdout.orig.txt")));
    let ours = read(&work.path("report.txt"));
    assert_eq!(ours, expected::text(&dir.join("report.fixed.txt"), &ours));
    // docs/compatibility.md#analyze-quirk-11: the original names the .asm.ip it wrote into the dump.
    let orig = read(&dir.join("report.orig.txt")).replace(".asm.ip\n", ".asm\n");
    same_modulo_tie_order(&ours, &orig, &dir.join("stalls.csv"));
    assert!(!snapshot(&work.path("dump"))
        .keys()
        .any(|n| n.ends_with(".ip")));
}

#[test]
fn asm_ip_left_by_the_original_is_named_like_the_original() {
    let work = Work::new("raw");
    // What the original leaves behind: `<asm>.ip` next to each used .asm.
    let first = Work::new("raw");
    let out = first.run(&["-s", "dump", "-r", "r.txt", "-o", "c.pdf", &csv_arg("raw")]);
    assert!(out.status.success());
    let ours = read(&first.path("r.txt"));
    for line in ours.lines() {
        if let Some(p) = line.strip_prefix("Assembly with instruction addresses: ") {
            let src = work.path(p);
            let text = fs::read_to_string(&src).unwrap();
            let mut addr = 0u64;
            let annotated: String = text
                .split_inclusive('\n')
                .map(|l| {
                    if !l.starts_with("//") && l.contains("//") {
                        let s = format!("/* [{addr:08X}] */ {l}");
                        addr += if l.contains("Compacted") { 8 } else { 16 };
                        s
                    } else {
                        l.to_string()
                    }
                })
                .collect();
            fs::write(work.path(&format!("{p}.ip")), annotated).unwrap();
        }
    }
    let out = work.run(&["-s", "dump", "-r", "r.txt", "-o", "c.pdf", &csv_arg("raw")]);
    assert!(out.status.success());
    let orig = read(&testdata("raw").join("report.orig.txt"));
    same_modulo_tie_order(
        &read(&work.path("r.txt")),
        &orig,
        &testdata("raw").join("stalls.csv"),
    );
}

#[test]
fn report_goes_into_the_pdf_without_r() {
    let work = Work::new("src");
    let csv = csv_arg("src");
    let with_report = work.run(&["-s", "dump", "-o", "with.pdf", &csv]);
    assert!(with_report.status.success(), "{}", stderr(&with_report));
    let charts_only = work.run(&["-o", "charts.pdf", &csv]);
    assert!(charts_only.status.success());
    let pages = |p: &str| {
        fs::read(work.path(p))
            .unwrap()
            .windows(10)
            .filter(|w| w == b"/Type /Pag")
            .count()
    };
    assert!(pages("with.pdf") > pages("charts.pdf"));
    assert!(!work.path("report.txt").exists());
}

#[test]
fn json_report_lists_every_stalled_instruction_with_causes() {
    let work = Work::new("src");
    let out = work.run(&[
        "-s",
        "dump",
        "-n",
        "-1",
        "--report-format",
        "json",
        "-r",
        "r.json",
        "-o",
        "c.pdf",
        &csv_arg("src"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&read(&work.path("r.json"))).unwrap();
    let kernels = doc["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 3);
    assert_eq!(kernels[0]["kernel"], "gen_conv");
    assert!(kernels[0]["asm"].is_null());
    let rows = rows_by_kernel(&testdata("src").join("stalls.csv"));
    let by_name = |k: &str| kernels.iter().find(|v| v["kernel"] == k).unwrap();
    let triton = by_name("triton_poi_fused_add_0");
    let stalls = triton["stalls"].as_array().unwrap();
    // One entry per non-zero (row, stall type) of the kernel.
    let expected: usize = rows["triton_poi_fused_add_0"]
        .iter()
        .map(|r| r.counts[..8].iter().filter(|&&c| c > 0).count())
        .sum();
    assert_eq!(stalls.len(), expected);
    let sbid: Vec<_> = stalls
        .iter()
        .filter(|s| s["stall_type"] == "Sbid")
        .collect();
    assert!(!sbid.is_empty());
    let mut with_line = 0;
    for s in &sbid {
        // A send stalled on its own token allocation has no cause.
        let causes = s["causes"].as_array().unwrap();
        for c in causes {
            assert_ne!(c["address"], s["address"]);
            assert!(c["instruction"].as_str().unwrap().contains('$'));
            with_line += usize::from(c["line"].is_u64());
            // Triton kernels have no // File markers.
            assert!(c["file"].is_null());
        }
    }
    assert!(with_line > 0);
    let lambda = by_name("main::{lambda(auto:1)#4}");
    let first = &lambda["stalls"][0];
    assert!(
        first["file"].as_str().unwrap().ends_with(".hpp")
            || first["file"].as_str().unwrap().ends_with(".cpp")
    );
}

#[test]
fn by_line_sums_stalls_per_source_line_and_line_lists_instructions() {
    let work = Work::new("src");
    let csv = csv_arg("src");
    let k = "main::{lambda(auto:1)#4}";
    let out = work.run(&[
        "-k",
        k,
        "-s",
        "dump",
        "--by-line",
        "-r",
        "lines.txt",
        "-o",
        "c.pdf",
        &csv,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = read(&work.path("lines.txt"));
    assert!(text.starts_with(&format!("Kernel: {k}\n")));
    // Totals of the table add up to every stall event of the kernel.
    let rows = rows_by_kernel(&testdata("src").join("stalls.csv"));
    let all: u64 = rows[k]
        .iter()
        .map(|r| r.counts[..8].iter().sum::<u64>())
        .sum();
    let mut sum = 0;
    let mut first_location = None;
    let mut previous = u64::MAX;
    for line in text
        .lines()
        .skip_while(|l| !l.ends_with("Location"))
        .skip(1)
    {
        if line.starts_with("====") {
            break;
        }
        let total: u64 = line.split_whitespace().next().unwrap().parse().unwrap();
        assert!(total <= previous, "sorted by total");
        previous = total;
        sum += total;
        first_location.get_or_insert_with(|| line.split_whitespace().nth(9).unwrap().to_string());
    }
    assert_eq!(sum, all);
    // --line FILE:LINE lists the instructions of the busiest line.
    let location = first_location.unwrap();
    let (file, number) = location.rsplit_once(':').unwrap();
    let base = file.rsplit('/').next().unwrap();
    let spec = format!("{base}:{number}");
    let out = work.run(&[
        "-k", k, "-s", "dump", "--line", &spec, "-r", "one.txt", "-o", "c.pdf", &csv,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let one = read(&work.path("one.txt"));
    assert!(one.contains(&format!("Source line {location}")), "{one}");
    assert!(one.contains("/* ["));
    assert!(one.contains("(line total)"));
}

#[test]
fn multi_device_file_and_digit_only_ips() {
    // Device 1 of a two-device file holds the src rows; a blank line
    // precedes the second banner (docs/compatibility.md#analyze-quirk-5).
    let work = Work::new("src");
    let src = read(&testdata("src").join("stalls.csv"));
    let body = src.split_once("=== Device #0 Metrics ===\n").unwrap().1;
    let two = format!("\n=== Device #0 Metrics ===\n{body}\n=== Device #1 Metrics ===\n{body}");
    fs::write(work.path("two.csv"), two).unwrap();
    let out = work.run(&[
        "-d", "1", "-s", "dump", "-r", "r.txt", "-o", "c.pdf", "two.csv",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        read(&work.path("r.txt")),
        read(&testdata("src").join("report.fixed.txt"))
    );
    // Digit-only IPs (docs/compatibility.md#analyze-quirk-6): keep only the triton rows whose IP has no
    // letter; they are still hex offsets.
    let header = src
        .lines()
        .find(|l| l.contains("OtherStall[Events]"))
        .unwrap();
    let digits: Vec<&str> = src
        .lines()
        .filter(|l| l.contains("\"triton_poi_fused_add_0\""))
        .filter(|l| {
            l.split(',')
                .nth(1)
                .unwrap()
                .trim()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .collect();
    assert!(digits.len() >= 3);
    fs::write(
        work.path("digits.csv"),
        format!(
            "\n=== Device #0 Metrics ===\n\n{header}\n{}\n",
            digits.join("\n")
        ),
    )
    .unwrap();
    let out = work.run(&[
        "-n",
        "-1",
        "-s",
        "dump",
        "-r",
        "d.txt",
        "-o",
        "d.pdf",
        "digits.csv",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("not instructions"),
        "{}",
        stderr(&out)
    );
    let report = read(&work.path("d.txt"));
    let rows = rows_by_kernel(&work.path("digits.csv"));
    let mut stalled = 0;
    for r in &rows["triton_poi_fused_add_0"] {
        let n = r.counts[..8].iter().filter(|&&c| c > 0).count();
        if n > 0 {
            assert!(
                report.contains(&format!("\n  /* [{:08X}] */", r.ip)),
                "{}",
                r.ip_text
            );
        }
        stalled += n;
    }
    assert_eq!(report.matches("\nInstruction\n").count(), stalled);
}

#[test]
fn external_demangler_that_fails_falls_back_to_built_in() {
    let work = Work::new("src");
    let out = work.run(&[
        "-g",
        "/nonexistent/c++filt",
        "-k",
        "main::{lambda(auto:1)#4}",
        "-n",
        "3",
        "-s",
        "dump",
        "-r",
        "r.txt",
        "-o",
        "c.pdf",
        &csv_arg("src"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("is not found or fails to run"));
    assert_eq!(
        read(&work.path("r.txt")),
        read(&testdata("src").join("report_k.orig.txt"))
    );
}

// ---- bad input: one line on stderr, exit != 0, no output file ----

fn assert_failed_cleanly(work: &Work, out: &Output, needle: &str) {
    assert!(!out.status.success());
    let err = stderr(out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("analyze: ") && err.contains(needle),
        "{err}"
    );
    assert!(!work.path("c.pdf").exists());
    assert!(!work.path("r.txt").exists());
}

#[test]
fn missing_dump_folder() {
    let work = Work::new("src");
    let out = work.run(&["-s", "nope", "-r", "r.txt", "-o", "c.pdf", &csv_arg("src")]);
    assert_failed_cleanly(&work, &out, "nope: shader dump folder does not exist");
}

#[test]
fn empty_dump_folder() {
    let work = Work::new("src");
    fs::create_dir(work.path("empty")).unwrap();
    let out = work.run(&["-s", "empty", "-r", "r.txt", "-o", "c.pdf", &csv_arg("src")]);
    assert_failed_cleanly(&work, &out, "empty: shader dump folder is empty");
    fs::write(work.path("empty/notes.txt"), "x").unwrap();
    let out = work.run(&["-s", "empty", "-r", "r.txt", "-o", "c.pdf", &csv_arg("src")]);
    assert_failed_cleanly(&work, &out, "has no .asm files (it holds notes.txt)");
}

#[test]
fn no_asm_for_the_kernel_lists_what_is_there() {
    let work = Work::new("src");
    let out = work.run(&[
        "-k",
        "gen_conv",
        "-s",
        "dump",
        "-r",
        "r.txt",
        "-o",
        "c.pdf",
        &csv_arg("src"),
    ]);
    assert!(out.status.success());
    // The original `print`s the one-line report into the file.
    assert_eq!(
        read(&work.path("r.txt")),
        "Not found .asm file for gen_conv\n"
    );
    assert!(stdout(&out).starts_with("Not found .asm file for gen_conv\n"));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1);
    assert!(err.contains("warning: dump: no .asm file for kernel gen_conv; the dump holds 4 .asm file(s) for: main::{lambda(auto:1)#1}, main::{lambda(auto:1)#4}, triton_poi_fused_add_0"), "{err}");
}

#[test]
fn malformed_asm_line() {
    let work = Work::new("src");
    let asm = work.path("dump/OCL_asmade519c0b0efd44d_1_simd16_entry_0001.asm");
    let text = read(&asm);
    let broken = text.replacen(
        "// B003: Preds:{B002, B003},  Succs:{B003, B004}",
        "// B003: Preds:{B002, B003,  Succs:",
        1,
    );
    assert_ne!(broken, text);
    fs::write(&asm, &broken).unwrap();
    let line = broken
        .lines()
        .position(|l| l.starts_with("// B003"))
        .unwrap()
        + 1;
    let out = work.run(&[
        "-k",
        "triton_poi_fused_add_0",
        "-s",
        "dump",
        "-r",
        "r.txt",
        "-o",
        "c.pdf",
        &csv_arg("src"),
    ]);
    assert_failed_cleanly(
        &work,
        &out,
        &format!("dump/OCL_asmade519c0b0efd44d_1_simd16_entry_0001.asm:{line}: malformed asm line"),
    );
}

#[test]
fn stall_addresses_not_in_the_asm_are_a_warning() {
    let work = Work::new("src");
    let src = read(&testdata("src").join("stalls.csv"));
    let rows = rows_by_kernel(&testdata("src").join("stalls.csv"));
    let stalled = rows["triton_poi_fused_add_0"]
        .iter()
        .find(|r| r.has_reported_stall())
        .unwrap();
    let row = src.lines().nth(stalled.line as usize - 1).unwrap();
    let bogus = row.replacen(&format!(" {},", stalled.ip_text), " fff0,", 1);
    assert_ne!(bogus, row);
    let patched = src.replacen(row, &format!("{row}\n{bogus}"), 1);
    fs::write(work.path("s.csv"), patched).unwrap();
    let out = work.run(&[
        "-k",
        "triton_poi_fused_add_0",
        "-s",
        "dump",
        "-r",
        "r.txt",
        "-o",
        "c.pdf",
        "s.csv",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("warning: s.csv: 1 stalled address(es) of kernel triton_poi_fused_add_0 are not instructions of"), "{err}");
    assert!(err.contains(": fff0"), "{err}");
    assert!(work.path("r.txt").is_file());
}

#[test]
fn report_file_only_created_when_written() {
    let work = Work::new("src");
    // Unknown kernel: error, and no empty -r file (docs/compatibility.md#analyze-quirk-16, #analyze-quirk-17).
    let out = work.run(&[
        "-k",
        "main::{lambda(auto:1)#1}",
        "-s",
        "dump",
        "-r",
        "r.txt",
        "-o",
        "c.pdf",
        &csv_arg("src"),
    ]);
    assert_failed_cleanly(
        &work,
        &out,
        "No metric data for kernel main::{lambda(auto:1)#1}",
    );
    // A kernel whose rows are all zero: the original's message, no files.
    let src = read(&testdata("src").join("stalls.csv"));
    let header = src
        .lines()
        .find(|l| l.contains("OtherStall[Events]"))
        .unwrap();
    let zeros = header
        .split(',')
        .skip(2)
        .map(|_| "0")
        .collect::<Vec<_>>()
        .join(", ");
    fs::write(
        work.path("z.csv"),
        format!("\n=== Device #0 Metrics ===\n\n{header}\n\"idle\", 10, {zeros}\n"),
    )
    .unwrap();
    let out = work.run(&[
        "-k", "idle", "-s", "dump", "-r", "r.txt", "-o", "c.pdf", "z.csv",
    ]);
    assert!(out.status.success());
    assert_eq!(
        stdout(&out),
        "\nNo stall events for kernel idle in the input data\n"
    );
    assert!(!work.path("r.txt").exists() && !work.path("c.pdf").exists());
}

#[test]
fn json_needs_a_report_file_and_line_spec_is_checked() {
    let work = Work::new("src");
    let out = work.run(&[
        "-s",
        "dump",
        "--report-format",
        "json",
        "-o",
        "c.pdf",
        &csv_arg("src"),
    ]);
    assert_failed_cleanly(&work, &out, "--report-format json needs -r/--report FILE");
    let out = work.run(&[
        "-s",
        "dump",
        "--line",
        "grf.cpp",
        "-r",
        "r.txt",
        "-o",
        "c.pdf",
        &csv_arg("src"),
    ]);
    assert_failed_cleanly(&work, &out, "expected FILE:LINE");
}

#[test]
fn data_file_holds_the_plotted_stall_series() {
    let work = Work::new("src");
    let out = work.run(&[
        "-k",
        "triton_poi_fused_add_0",
        "-s",
        "dump",
        "--data",
        "d.csv",
        "-o",
        "c.pdf",
        &csv_arg("src"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let data = read(&work.path("d.csv"));
    let rows = rows_by_kernel(&testdata("src").join("stalls.csv"));
    let kept = rows["triton_poi_fused_add_0"]
        .iter()
        .filter(|r| r.has_reported_stall())
        .count();
    // The X column is the instruction address in 0x hex
    // (docs/compatibility.md#analyze-data-ip).
    assert!(data.starts_with("kernel,instance,ip,metric,value\n"));
    // Eight series (PVC file, no PSDep) of one point per kept row.
    assert_eq!(data.lines().count(), 1 + 8 * kept);
    assert!(data.contains("triton_poi_fused_add_0,,"));
    let first = rows["triton_poi_fused_add_0"]
        .iter()
        .find(|r| r.has_reported_stall())
        .unwrap();
    let ip = data.lines().nth(1).unwrap().split(',').nth(2).unwrap();
    assert_eq!(ip, format!("0x{:x}", first.ip));
    assert!(data
        .lines()
        .skip(1)
        .all(|l| l.split(',').nth(2).unwrap().starts_with("0x")));
}

/// The case of the repository's generator (`ugen/`, unitrace-gen stalls;
/// testdata/stall_report/README.md): five kernels, one compiled twice, one
/// without `.asm`, waits resolved in predecessor blocks. Its stall counts
/// never tie, so the report equals the original's byte for byte.
#[test]
fn generated_dump_matches_original_exactly() {
    let dir = testdata("ugen");
    for (extra, suffix) in [(&[][..], ""), (&["-n", "3"][..], "_n3")] {
        let (report, pdf) = if suffix.is_empty() {
            ("report.txt".to_string(), "charts.pdf".to_string())
        } else {
            (
                format!("report{suffix}.txt"),
                format!("{}.pdf", &suffix[1..]),
            )
        };
        let (work, out) = run_case_named("ugen", extra, &report, &pdf);
        assert_eq!(
            stdout(&out),
            read(&dir.join(format!("stdout{suffix}.orig.txt")))
        );
        assert_eq!(
            read(&work.path(&report)),
            read(&dir.join(format!("report{suffix}.orig.txt")))
        );
    }
}
