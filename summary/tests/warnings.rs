//! Flawed but usable members: one warning per member and kind.

use std::path::{Path, PathBuf};

use crate::{run_ok, tgz_of};

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
    // counted either (docs/compatibility.md#summary-2), and line 8 ends a second table.
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
