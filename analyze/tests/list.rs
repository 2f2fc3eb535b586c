//! `analyze -l` against golden listings (testdata/metrics/, see its README)
//! and on bad inputs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use unitrace_system_tests::expected;

fn analyze() -> Command {
    Command::new(env!("CARGO_BIN_EXE_analyze"))
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/metrics")
}

fn csv_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    files.sort();
    files
}

/// The one deliberate difference from the original's listing of metric
/// files: `GlobalInstanceId` numbers kernel instances and is not listed as a
/// metric (docs/compatibility.md#analyze-list-instance-id). The
/// originals' goldens stay as the original wrote them; this removes exactly
/// that item from the expected text, and it must have been there.
fn without_instance_id(original: Vec<u8>, name: &str) -> Vec<u8> {
    const ITEM: &str = "        GlobalInstanceId\n";
    let text = String::from_utf8(original).unwrap();
    if name.starts_with("stalls") {
        assert!(
            !text.contains(ITEM),
            "{name}: a stall listing with {ITEM:?}"
        );
        return text.into_bytes();
    }
    assert!(
        text.contains(ITEM),
        "{name}: the original did not list GlobalInstanceId"
    );
    text.replace(ITEM, "").into_bytes()
}

/// Which expected listings a check compares with (tests/README.md,
/// "Expected files").
#[derive(Clone, Copy, PartialEq)]
enum Expected {
    /// `NAME.orig.list.txt`, the original's listing, for every input
    /// without a `NAME.fixed.list.txt`.
    Original,
    /// `NAME.fixed.list.txt`, ours where the original is wrong (rewritten
    /// under `BLESS=1`).
    Fixed,
}

/// Runs `analyze -l` on the `*.csv` of `dir` that have the `kind` of
/// expected listing, to stdout and with `-o`, and compares with it (passed
/// through `adjust`). Returns the number of inputs checked and the failures.
fn check_dir(
    dir: &Path,
    kind: Expected,
    adjust: fn(Vec<u8>, &str) -> Vec<u8>,
) -> (usize, Vec<String>) {
    let out_dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut checked = 0;
    for input in &csv_files(dir) {
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let fixed_path = input.with_extension("fixed.list.txt");
        if fixed_path.exists() != (kind == Expected::Fixed) {
            continue;
        }
        checked += 1;
        let out = analyze().arg("-l").arg(input).output().unwrap();
        let expected_path = match kind {
            Expected::Original => input.with_extension("orig.list.txt"),
            Expected::Fixed => fixed_path,
        };
        let expected = match kind {
            Expected::Original => fs::read(&expected_path),
            Expected::Fixed if out.status.success() && out.stderr.is_empty() => {
                Ok(expected::file(&expected_path, &out.stdout))
            }
            Expected::Fixed => fs::read(&expected_path),
        };
        let expected = match expected {
            Ok(e) => adjust(e, &name),
            Err(e) => {
                failures.push(format!("{name}: no expected listing: {e}"));
                continue;
            }
        };
        if !out.status.success() || !out.stderr.is_empty() {
            failures.push(format!(
                "{name}: exit {:?}, stderr {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        if out.stdout != expected {
            failures.push(format!(
                "{name}: stdout differs from {}",
                first_difference(&out.stdout, &expected)
            ));
        }
        let listing = out_dir.path().join(format!("{name}.txt"));
        let out = analyze()
            .arg("-l")
            .arg("-o")
            .arg(&listing)
            .arg(input)
            .output()
            .unwrap();
        if !out.status.success() || !out.stdout.is_empty() {
            failures.push(format!(
                "{name}: with -o: exit {:?}, stdout not empty",
                out.status.code()
            ));
            continue;
        }
        match fs::read(&listing) {
            Ok(written) if written == expected => {}
            Ok(written) => failures.push(format!(
                "{name}: -o file differs: {}",
                first_difference(&written, &expected)
            )),
            Err(e) => failures.push(format!("{name}: -o file not written: {e}")),
        }
    }
    (checked, failures)
}

fn first_difference(got: &[u8], want: &[u8]) -> String {
    let got = String::from_utf8_lossy(got);
    let want = String::from_utf8_lossy(want);
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        if g != w {
            return format!("line {}: got {g:?}, want {w:?}", i + 1);
        }
    }
    format!(
        "length: got {} lines, want {} lines",
        got.lines().count(),
        want.lines().count()
    )
}

/// Goldens written by the original analyzeperfmetrics.py -l (pandas 3.1.1)
/// on generator outputs of every variant and hand-made tricky names: our
/// output must be byte-identical, but for the `GlobalInstanceId` item
/// (`without_instance_id`).
#[test]
fn listings_match_the_original_script() {
    let (count, failures) = check_dir(&testdata(), Expected::Original, without_instance_id);
    assert!(count >= 17, "only {count} golden inputs found");
    assert!(
        failures.is_empty(),
        "golden mismatches:\n{}",
        failures.join("\n")
    );
}

/// Inputs on which the original is wrong; the expected listings were
/// written by hand (testdata/metrics/README.md gives the reason for
/// each: docs/compatibility.md#analyze-quirk-4, #analyze-quirk-5 and
/// #analyze-quirk-15, and the trailing-separator
/// column pandas names `Unnamed: N`).
#[test]
fn listings_where_the_original_is_wrong() {
    let (count, failures) = check_dir(&testdata(), Expected::Fixed, |e, _| e);
    assert!(count >= 8, "only {count} fixed inputs found");
    assert!(
        failures.is_empty(),
        "fixed-listing mismatches:\n{}",
        failures.join("\n")
    );
}

/// Runs `analyze -l -o OUT INPUT` on a bad input and checks the error
/// contract: one stderr line `analyze: INPUT[:LINE]: ...` containing
/// `problem`, exit code 1, no output file (nor temp file), input unchanged.
fn assert_bad_input(input: &Path, line: Option<u64>, problem: &str) {
    let before = fs::read(input).ok();
    let out_dir = tempfile::tempdir().unwrap();
    let listing = out_dir.path().join("listing.txt");
    let out = analyze()
        .arg("-l")
        .arg("-o")
        .arg(&listing)
        .arg(input)
        .output()
        .unwrap();
    check_error(&out, input, line, problem);
    assert!(
        !listing.exists(),
        "output file written for {}",
        input.display()
    );
    assert_eq!(
        fs::read_dir(out_dir.path()).unwrap().count(),
        0,
        "leftover files"
    );
    assert_eq!(fs::read(input).ok(), before, "input changed");
}

fn check_error(out: &Output, input: &Path, line: Option<u64>, problem: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "not one line: {stderr:?}");
    let prefix = match line {
        Some(l) => format!("analyze: {}:{l}: ", input.display()),
        None => format!("analyze: {}: ", input.display()),
    };
    assert!(
        stderr.starts_with(&prefix),
        "{stderr:?} does not start with {prefix:?}"
    );
    assert!(
        stderr.contains(problem),
        "{stderr:?} does not mention {problem:?}"
    );
}

fn write_input(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, bytes).unwrap();
    p
}

const HEADER: &str =
    "\n=== Device #0 Metrics ===\n\nKernel, GlobalInstanceId, GpuTime[ns], XVE_ACTIVE[%]\n";

#[test]
fn missing_file() {
    let dir = tempfile::tempdir().unwrap();
    assert_bad_input(
        &dir.path().join("nope.csv"),
        None,
        "file does not exist or cannot be opened",
    );
}

#[test]
fn directory_instead_of_file() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("metrics");
    fs::create_dir(&sub).unwrap();
    assert_bad_input(&sub, None, "is a directory");
}

#[test]
fn empty_file() {
    let dir = tempfile::tempdir().unwrap();
    assert_bad_input(
        &write_input(dir.path(), "e.csv", b""),
        None,
        "file is empty",
    );
}

#[test]
fn json_trace_is_not_a_metric_csv() {
    let dir = tempfile::tempdir().unwrap();
    let json = br#"{"traceEvents": [{"name": "zeInit", "ph": "X", "pid": 1, "tid": 1, "ts": 1.0, "dur": 2.0}],
"displayTimeUnit": "ns"}
"#;
    assert_bad_input(
        &write_input(dir.path(), "trace.json", json),
        Some(1),
        "not a unitrace metric or stall CSV",
    );
}

#[test]
fn text_without_header_is_not_a_metric_csv() {
    let dir = tempfile::tempdir().unwrap();
    let text = b"=== Device Timing Summary ===\n\n  Total Execution Time (ns): 5\n";
    assert_bad_input(
        &write_input(dir.path(), "log.txt", text),
        None,
        "no header line",
    );
}

#[test]
fn header_with_no_known_metric() {
    let dir = tempfile::tempdir().unwrap();
    let text = "\n=== Device #0 Metrics ===\n\nKernel, GlobalInstanceId\n\"k\", 1\n";
    assert_bad_input(
        &write_input(dir.path(), "h.csv", text.as_bytes()),
        Some(4),
        "header names no metric",
    );
}

#[test]
fn truncated_last_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{HEADER}\"k\", 1, 50000, 2.5\n\"k\", 1, 500");
    assert_bad_input(
        &write_input(dir.path(), "t.csv", text.as_bytes()),
        Some(6),
        "truncated last line",
    );
}

#[test]
fn row_with_wrong_field_count() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{HEADER}\"k\", 1, 50000, 2.5\n\"k\", 1, 50000, 2.5, 7\n\n");
    assert_bad_input(
        &write_input(dir.path(), "w.csv", text.as_bytes()),
        Some(6),
        "row has 5 fields, header (line 4) has 4",
    );
}

#[test]
fn ten_megabyte_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = HEADER.as_bytes().to_vec();
    text.push(b'"');
    text.extend_from_slice(&vec![b'x'; 10 << 20]);
    text.extend_from_slice(b"\", 1, 2, 3\n");
    assert_bad_input(
        &write_input(dir.path(), "long.csv", &text),
        Some(5),
        "line longer than 1 MiB",
    );
}

#[test]
fn section_without_header() {
    let dir = tempfile::tempdir().unwrap();
    let text = "\n=== Device #0 Metrics ===\n\n\"k\", 1, 2\n";
    assert_bad_input(
        &write_input(dir.path(), "n.csv", text.as_bytes()),
        Some(2),
        "has no header line",
    );
}

#[test]
fn output_equal_to_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{HEADER}\"k\", 1, 50000, 2.5\n\n");
    let input = write_input(dir.path(), "m.csv", text.as_bytes());
    let out = analyze()
        .arg("-l")
        .arg("-o")
        .arg(&input)
        .arg(&input)
        .output()
        .unwrap();
    check_error(&out, &input, None, "refusing to overwrite");
    assert_eq!(fs::read(&input).unwrap(), text.as_bytes());
}

/// Non-UTF-8 bytes in a kernel name are not an error: the name is kept with
/// U+FFFD for the bad bytes, and one warning line says where.
#[test]
fn non_utf8_kernel_name_is_kept_lossily() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = HEADER.as_bytes().to_vec();
    text.extend_from_slice(b"\"k\xff\xfe<int>\", 1, 50000, 2.5\n\n\"ok\", 2, 1, 1\n\n");
    let input = write_input(dir.path(), "u.csv", &text);
    let listing = dir.path().join("l.txt");
    let out = analyze()
        .arg("-l")
        .arg("-o")
        .arg(&listing)
        .arg(&input)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "analyze: warning: {}:5: kernel name is not valid UTF-8; invalid bytes are shown as U+FFFD\n",
            input.display()
        )
    );
    let written = fs::read_to_string(&listing).unwrap();
    assert!(
        written.contains("        \"k\u{FFFD}\u{FFFD}<int>\", 1\n        \"ok\", 1\n"),
        "{written}"
    );
    assert_eq!(fs::read(&input).unwrap(), text);
}

/// A CSV with a `Kernel` column but none unitrace writes is listed as
/// before, with one warning (docs/compatibility.md#analyze-foreign-csv).
#[test]
fn csv_without_unitrace_columns_is_listed_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let text = "Kernel,Time[ms],Bytes[bytes]\n\"k\",1,2\n\n\"k\",3,4\n\n\"q\",5,6\n";
    let input = write_input(dir.path(), "x.csv", text.as_bytes());
    let out = analyze().arg("-l").arg(&input).output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Device 0\n    Metric\n        Time[ms]\n        Bytes[bytes]\n    Kernel, Number of Instances\n        \"k\", 2\n        \"q\", 1\n"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "analyze: warning: {}:1: header has a Kernel column but no column unitrace writes \
             (GpuTime[ns], GlobalInstanceId, stall columns, ...): this may not be a unitrace file\n",
            input.display()
        )
    );
    // A unitrace header: no warning.
    let text = "Kernel,GpuTime[ns],A[%]\n\"k\",1,2\n";
    let input = write_input(dir.path(), "u.csv", text.as_bytes());
    let out = analyze().arg("-l").arg(&input).output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
