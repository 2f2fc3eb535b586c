//! `summary` against summary.py's outputs (testdata/summary/README.md), the
//! quirk fixes of scripts.md 4.5, the per-rank table and bad input.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn data(name: &str) -> PathBuf {
    repo().join("testdata/summary").join(name)
}

fn llama() -> PathBuf {
    repo().join("schemas/LLaMA.json")
}

fn summary(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_summary"))
        .args(args)
        .output()
        .expect("runs summary")
}

/// stdout of a successful run on `tgz` with the LLaMA schema.
fn run_ok(tgz: &Path, extra: &[&str]) -> (String, String) {
    let mut args = vec![
        "--input",
        tgz.to_str().unwrap(),
        "--schema",
        llama().to_str().unwrap().to_owned().leak(),
    ];
    args.extend_from_slice(extra);
    let o = summary(&args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "summary failed: {stderr}");
    (String::from_utf8(o.stdout).unwrap(), stderr)
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

const AGGREGATORS: [&str; 7] = ["min", "max", "mean", "median", "sum", "min+1", "max-1"];

#[test]
fn synthetic_tarball_matches_the_original_for_every_aggregator() {
    for a in AGGREGATORS {
        let (out, _) = run_ok(&data("plain.tgz"), &["--aggregator", a]);
        assert_eq!(out, golden(&format!("plain.{a}.json")), "aggregator {a}");
    }
}

#[test]
fn real_summaries_match_the_original_for_every_aggregator() {
    for a in AGGREGATORS {
        let (out, _) = run_ok(&data("real_hd.tgz"), &["--aggregator", a]);
        assert_eq!(out, golden(&format!("real_hd.{a}.json")), "aggregator {a}");
    }
}

#[test]
fn result_dir_layout_with_launcher_log_matches_the_original() {
    let (out, _) = run_ok(&data("resultdir_launcher.tgz"), &[]);
    assert_eq!(out, golden("resultdir_launcher.mean.json"));
}

#[test]
fn output_file_is_the_same_bytes_and_aliases_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.json");
    let o = summary(&[
        "--tarfile",
        data("plain.tgz").to_str().unwrap(),
        "--schema",
        llama().to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
        "--aggr",
        "median",
    ]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        golden("plain.median.json")
    );
}

// --- quirks of scripts.md 4.5, each with input on which the original fails or
// --- differs; expected = the original on the normalized tarball.

#[test]
fn duplicate_rows_are_summed_per_file_before_aggregating() {
    // scripts.md 4.5 #4: the original takes two rows of one kernel in one file
    // as two samples, so min/median/min+1 differ.
    for a in ["min", "median", "min+1"] {
        let (out, _) = run_ok(&data("dups.tgz"), &["--aggregator", a]);
        assert_eq!(out, golden(&format!("dups.fixed.{a}.json")), "{a}");
        assert_ne!(out, golden(&format!("dups.original.{a}.json")), "{a}");
    }
    let (out, _) = run_ok(&data("dups.tgz"), &[]);
    assert_eq!(out, golden("dups.fixed.mean.json"));
}

#[test]
fn double_ccl_block_is_counted_once() {
    // scripts.md 4.5 #2: the original crashes on the second banner.
    let (out, _) = run_ok(&data("ccl_twice.tgz"), &[]);
    assert_eq!(out, golden("ccl_twice.fixed.mean.json"));
}

#[test]
fn kernel_submission_blocks_are_ignored() {
    // scripts.md 4.5 #1: the original counts the totals again and fails with
    // KeyError on the submission table.
    let (out, _) = run_ok(&data("submission.tgz"), &[]);
    assert_eq!(out, golden("submission.fixed.mean.json"));
}

#[test]
fn old_unquoted_names_with_commas_parse() {
    // scripts.md 4.5 #7: the original fails converting part of a name.
    let (out, _) = run_ok(&data("old_format.tgz"), &[]);
    assert_eq!(out, golden("old_format.fixed.mean.json"));
}

#[test]
fn tile_prefixes_and_shapes_are_removed_from_names() {
    // scripts.md 4.5 #6: `Tile #n: "…"` and `[SIMD…]` names miss the schema.
    let (out, _) = run_ok(&data("tiles.tgz"), &[]);
    assert_eq!(out, golden("tiles.fixed.mean.json"));
    let (out, _) = run_ok(&data("verbose_names.tgz"), &[]);
    assert_eq!(out, golden("verbose_names.fixed.mean.json"));
}

#[test]
fn binary_member_is_a_warning_not_an_abort() {
    // scripts.md 4.5 #7: the original aborts with a decode error.
    let tgz = data("binary_member.tgz");
    let (out, stderr) = run_ok(&tgz, &[]);
    assert_eq!(out, golden("plain.mean.json"));
    assert!(
        stderr.contains(&format!(
            "summary: warning: {}: ./zz_core.bin: binary member skipped",
            tgz.display()
        )),
        "{stderr}"
    );
}

// --- per-rank table and coverage report

#[test]
fn per_rank_csv_has_one_row_per_rank_and_marks_the_slowest() {
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("ranks.csv");
    let (out, _) = run_ok(
        &data("plain.tgz"),
        &["--per-rank", csv_path.to_str().unwrap()],
    );
    assert_eq!(out, golden("plain.mean.json"), "stdout unchanged");
    let text = std::fs::read_to_string(&csv_path).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        &header[..5],
        ["rank", "pid", "member", "wallclock_ns", "device_total_ns"]
    );
    assert!(header.contains(&"matmul_time_ns".to_string()));
    assert!(header.contains(&"matmul_calls".to_string()));
    assert!(header.contains(&"allreduce_time_ns".to_string()));
    assert_eq!(header.last().unwrap(), "slowest_in");
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let ranks: Vec<&str> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(ranks, ["0", "1", "2", "3"]);
    // Each time column is the slowest on exactly one row.
    let matmul = header.iter().position(|h| h == "matmul_time_ns").unwrap();
    let max_row = (0..rows.len())
        .max_by_key(|&i| rows[i][matmul].parse::<i64>().unwrap())
        .unwrap();
    let marked: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i][header.len() - 1].contains("matmul_time_ns(+"))
        .collect();
    assert_eq!(marked, vec![max_row]);
    // Category sums over ranks divided by ranks give the mean of the summary
    // JSON (each rank has every matmul kernel once after merging).
    let sum: i64 = rows.iter().map(|r| r[matmul].parse::<i64>().unwrap()).sum();
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(sum as f64 / 4.0, json["matmul_time"].as_f64().unwrap());
}

#[test]
fn console_formats_report_ranks_coverage_and_unused_rules() {
    let (table, _) = run_ok(&data("plain.tgz"), &["--format", "table"]);
    assert!(table.starts_with("process"), "{table}");
    assert!(table.contains("rank 3"));
    assert!(table.contains("slowest vs median"));
    assert!(table.contains("fastest vs median"));
    assert!(table.contains("uncategorized: "));
    assert!(table.contains("rules that matched nothing: "));
    assert!(table.contains("[allreduce if starts with] Allreduce_small_kernel"));

    let (json, _) = run_ok(&data("plain.tgz"), &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["ranks"].as_array().unwrap().len(), 4);
    let share = v["uncategorized"]["device_time_share"].as_f64().unwrap();
    assert!(share > 0.0 && share < 1.0, "{share}");
    let top = v["uncategorized"]["top"].as_array().unwrap();
    assert!(!top.is_empty() && top.len() <= 10);
    assert!(v["slowest"]["wallclock_ns"]["vs_median_percent"].is_number());
    // The compute straggler waits least in the collectives: the rank slowest
    // in matmul is the fastest in allreduce.
    assert_eq!(
        v["slowest"]["matmul_time_ns"]["rank"],
        v["fastest"]["allreduce_time_ns"]["rank"]
    );
    assert!(v["unmatched_rules"].as_array().unwrap().len() > 10);

    let (csv_text, _) = run_ok(&data("plain.tgz"), &["--format", "csv"]);
    assert_eq!(csv_text.lines().count(), 5);
}

#[test]
fn default_category_share_is_noted_on_stderr() {
    let (_, stderr) = run_ok(&data("plain.tgz"), &[]);
    let notes: Vec<&str> = stderr.lines().collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(notes[0].starts_with("summary: note: "), "{stderr}");
    assert!(notes[0].contains("matched no rule"), "{stderr}");
}

// --- empty results and bad input

fn tgz_of(path: &Path, members: &[(&str, &[u8])]) {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, bytes) in members {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        builder.append_data(&mut h, name, *bytes).unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).unwrap();
    std::fs::write(path, gz.finish().unwrap()).unwrap();
}

const HOST_ONLY: &[u8] = b"\n=== API Timing Summary ===\n\n             Total Execution Time (ns):             81615043\n";

#[test]
fn empty_result_writes_nothing_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let tgz = dir.path().join("h.tgz");
    tgz_of(&tgz, &[("output.1.0.txt", HOST_ONLY)]);
    let out = dir.path().join("s.json");
    let (stdout, _) = run_ok(&tgz, &["--output", out.to_str().unwrap()]);
    assert!(stdout.is_empty());
    assert!(!out.exists());
    run_ok(
        &tgz,
        &["--output", out.to_str().unwrap(), "--no-skip-empty"],
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "{}");
}

/// Runs on a bad input and checks the one-line error, the exit code and
/// that no output file appeared.
fn assert_fails(tgz: &Path, schema: &Path, want_prefix: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.json");
    let ranks = dir.path().join("r.csv");
    let o = summary(&[
        "--input",
        tgz.to_str().unwrap(),
        "--schema",
        schema.to_str().unwrap(),
        "--output",
        out.to_str().unwrap(),
        "--per-rank",
        ranks.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(want_prefix),
        "want {want_prefix:?}, got {stderr:?}"
    );
    assert!(!out.exists() && !ranks.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn not_a_tarball() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.txt");
    std::fs::write(&p, "just some text, not an archive\n").unwrap();
    assert_fails(
        &p,
        &llama(),
        &format!("summary: {}: not a tar archive", p.display()),
    );
    // gzip, but not a tar inside
    let gz = dir.path().join("x.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&[b'x'; 4096]).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    assert_fails(
        &gz,
        &llama(),
        &format!("summary: {}: not a tar archive", gz.display()),
    );
}

#[test]
fn truncated_tarball() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(data("plain.tgz")).unwrap();
    let p = dir.path().join("cut.tgz");
    std::fs::write(&p, &bytes[..bytes.len() * 2 / 3]).unwrap();
    assert_fails(&p, &llama(), &format!("summary: {}: ", p.display()));
    let o = summary(&[
        "--input",
        p.to_str().unwrap(),
        "--schema",
        llama().to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("truncated"));
}

#[test]
fn empty_tarball() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("empty.tgz");
    tgz_of(&p, &[]);
    assert_fails(
        &p,
        &llama(),
        &format!("summary: {}: empty archive (no members)", p.display()),
    );
    let zero = dir.path().join("zero.tgz");
    std::fs::write(&zero, b"").unwrap();
    assert_fails(
        &zero,
        &llama(),
        &format!("summary: {}: empty file, not a tar archive", zero.display()),
    );
}

#[test]
fn member_without_summary_section() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.tgz");
    let good = b"\n=== Device Timing Summary ===\n\n  Total Execution Time (ns): 5\n";
    let timeline = b"Thread 1 Device 2 : \"k\" [ns] 1 (append) 2 (submit) 3 (start) 4 (end)\n";
    tgz_of(
        &p,
        &[
            ("output.1.0.txt", &good[..]),
            ("output.2.1.txt", &timeline[..]),
        ],
    );
    assert_fails(
        &p,
        &llama(),
        &format!(
            "summary: {}: output.2.1.txt: no summary section",
            p.display()
        ),
    );
}

#[test]
fn bad_number_names_member_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.tgz");
    let text = b"=== Device Timing Summary ===\n== L0 Backend ==\n\nKernel, Calls, Time (ns)\n\"k\", 3, lots\n";
    tgz_of(&p, &[("output.7.0.txt", &text[..])]);
    assert_fails(
        &p,
        &llama(),
        &format!(
            "summary: {}: output.7.0.txt:5: \"Time (ns)\" is not an integer",
            p.display()
        ),
    );
}

#[test]
fn schema_that_is_not_a_compiled_schema() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("s.json");
    std::fs::write(&schema, br#"{"categories": ["gemm"]}"#).unwrap();
    assert_fails(
        &data("plain.tgz"),
        &schema,
        &format!(
            "summary: {}: not a compiled category schema: no \"ignore_spaces\" key",
            schema.display()
        ),
    );
    // The INI given where the JSON belongs.
    assert_fails(
        &data("plain.tgz"),
        &repo().join("schemas/LLaMA.ini"),
        &format!(
            "summary: {}:1: not valid JSON",
            repo().join("schemas/LLaMA.ini").display()
        ),
    );
}

// --- flawed but usable members: one warning per member and kind

/// A device table whose rows are `rows` (after the header on line 4).
fn device_log(rows: &[&[u8]]) -> Vec<u8> {
    let mut text =
        b"=== Device Timing Summary ===\n== L0 Backend ==\n\nKernel, Calls, Time (ns)\n".to_vec();
    for row in rows {
        text.extend_from_slice(row);
        text.push(b'\n');
    }
    text
}

/// Runs on one member and returns (output JSON, warning lines).
fn warnings_of(dir: &Path, member: &[u8]) -> (String, Vec<String>, PathBuf) {
    let tgz = dir.join("w.tgz");
    tgz_of(&tgz, &[("output.3.0.txt", member)]);
    let (stdout, stderr) = run_ok(&tgz, &["--no-skip-empty"]);
    let warnings = stderr
        .lines()
        .filter(|l| l.starts_with("summary: warning: "))
        .map(str::to_string)
        .collect();
    (stdout, warnings, tgz)
}

#[test]
fn short_row_ending_a_table_is_a_warning_with_member_and_line() {
    // Line 6 lost its time; the table ends there, so line 7 is not
    // counted either (scripts.md 4.5 #2), and line 8 ends a second table.
    let log = device_log(&[b"\"k\", 2, 30", b"\"cut\", 1", b"\"k\", 1, 5"]);
    let dir = tempfile::tempdir().unwrap();
    let (stdout, warnings, tgz) = warnings_of(dir.path(), &log);
    assert_eq!(
        warnings,
        [format!(
            "summary: warning: {}: output.3.0.txt:6: table row has fewer fields than its header \
             (log cut mid-row?); the table ends there and its remaining rows are not counted \
             (once in this member)",
            tgz.display()
        )]
    );
    assert!(stdout.contains("30"), "{stdout}");
}

#[test]
fn negative_time_is_summed_with_one_warning_per_member() {
    let log = device_log(&[b"\"k\", 2, -30", b"\"j\", 1, 5", b"\"j\", 1, -1"]);
    let dir = tempfile::tempdir().unwrap();
    let (_, warnings, tgz) = warnings_of(dir.path(), &log);
    assert_eq!(
        warnings,
        [format!(
            "summary: warning: {}: output.3.0.txt:5: negative \"Time (ns)\" is summed as read \
             (2 times in this member)",
            tgz.display()
        )]
    );
}

#[test]
fn non_utf8_kernel_name_is_a_warning_once_per_member() {
    let log = device_log(&[b"\"k\", 2, 30", b"\"gemm_\xe9\", 1, 5", b"\"\xe8\", 1, 5"]);
    let dir = tempfile::tempdir().unwrap();
    let (_, warnings, tgz) = warnings_of(dir.path(), &log);
    assert_eq!(
        warnings,
        [format!(
            "summary: warning: {}: output.3.0.txt:6: text is not valid UTF-8 (a kernel name in \
             another encoding?); invalid bytes are read as U+FFFD",
            tgz.display()
        )]
    );
}

#[test]
fn clean_members_give_no_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (_, warnings, _) = warnings_of(dir.path(), &device_log(&[b"\"k\", 2, 30", b"\"j\", 1, 5"]));
    assert!(warnings.is_empty(), "{warnings:?}");
}
