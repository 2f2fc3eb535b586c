//! Empty results and bad input: one error line, exit 1, no output file.

use std::io::Write;
use std::path::Path;

use crate::{data, llama, repo, run_ok, summary, tgz_of};

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
    // Not a timeline either (those are skipped with a warning): a log of
    // a run that crashed before unitrace wrote its summary.
    let timeline = b"[INFO] Log is stored in output.2.1.txt\nSegmentation fault\n";
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
    // The INI given where the JSON belongs:
    // ini_schema_says_compile_it_with_categorize_first.
}

/// An INI schema (categorize's input) given to --schema: say to compile it
/// first, not "not valid JSON" (docs/compatibility.md#summary-schema-ini),
/// also when its name is not `.ini`.
#[test]
fn ini_schema_says_compile_it_with_categorize_first() {
    let ini = repo().join("schemas/LLaMA.ini");
    assert_fails(
        &data("plain.tgz"),
        &ini,
        &format!(
            "summary: {}: an INI category schema, not a compiled one: compile it with categorize first (categorize --ini {} --json SCHEMA.json)",
            ini.display(),
            ini.display()
        ),
    );
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("schema.txt");
    std::fs::copy(&ini, &renamed).unwrap();
    assert_fails(
        &data("plain.tgz"),
        &renamed,
        &format!("summary: {}: an INI category schema", renamed.display()),
    );
    // A broken JSON file is still reported as JSON.
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"categories\": [\n").unwrap();
    assert_fails(
        &data("plain.tgz"),
        &broken,
        &format!("summary: {}:", broken.display()),
    );
}
