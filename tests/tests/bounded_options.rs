//! Bounded options (docs/robustness.md#options): `--jobs` past the cores is
//! clamped with one warning; `--bins`, `--rank-rows`, `--tree`,
//! `--short-kernel` and the size options refuse absurd values with a usage
//! error (exit 2) whose first line names the option and the bound.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use unitrace_system_tests::{output_within, repo_root, tool_binary};

fn run(tool: &str, args: &[&str]) -> Output {
    let mut command = Command::new(tool_binary(tool));
    command.args(args).current_dir(repo_root());
    output_within(&mut command, Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{tool} {args:?}: {e}"))
}

fn first_line(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

const TRACE: &str = "testdata/trace/two/python.100003.0.json";

#[test]
fn absurd_values_are_usage_errors_naming_the_bound() {
    let cases: &[(&str, &[&str], &str)] = &[
        ("tracestat", &["--bins", "100000", TRACE], "error: invalid value '100000' for '--bins <N>': 100000 is not in 1..=4096"),
        ("tracestat", &["--bins", "0", TRACE], "error: invalid value '0' for '--bins <N>': 0 is not in 1..=4096"),
        ("tracestat", &["--jobs", "0", TRACE], "error: invalid value '0' for '--jobs <N>': 0 threads: give 1 or more"),
        ("tracestat", &["--jobs", "many", TRACE], "error: invalid value 'many' for '--jobs <N>': `many` is not a number of threads (1 or more)"),
        ("tracestat", &["--rank-rows", "0", TRACE], "error: invalid value '0' for '--rank-rows <N|all>': `0`: a number of ranks from 1 to 1048576, or `all`"),
        ("tracestat", &["--rank-rows", "99999999", TRACE], "error: invalid value '99999999' for '--rank-rows <N|all>': `99999999`: a number of ranks from 1 to 1048576, or `all`"),
        ("tracestat", &["--tree=100000", TRACE], "error: invalid value '100000' for '--tree[=<DEPTH>]': `100000`: a depth from 1 to 64 ranges"),
        ("tracestat", &["--short-kernel", "5000s", TRACE], "error: invalid value '5000s' for '--short-kernel <DUR>': `5000s` is longer than 1 hour"),
        ("tracestat", &["--short-kernel", "99999999999999999999s", TRACE], "error: invalid value '99999999999999999999s' for '--short-kernel <DUR>': '99999999999999999999s' is too large"),
        ("summary", &["--jobs", "0", "--input", "x.tgz", "--schema", "y.json"], "error: invalid value '0' for '--jobs <JOBS>': 0 threads: give 1 or more"),
        ("mergetrace", &["--max-event-mib", "100000", TRACE], "error: invalid value '100000' for '--max-event-mib <MIB>': 100000 is not in 1..=4096"),
        ("uniview", &["--max-merge-mib", "100000", "--result-dir", "."], "error: invalid value '100000' for '--max-merge-mib <MIB>': 100000 is not in 0..=65536"),
        ("roofline", &["--labels", "5000", "--device", "x", "--output", "y"], "error: invalid value '5000' for '--labels <N>': 5000 is not in 0..=1000"),
    ];
    let mut failures = Vec::new();
    for (tool, args, want) in cases {
        let out = run(tool, args);
        let got = first_line(&out);
        if out.status.code() != Some(2) || got != *want {
            failures.push(format!(
                "{tool} {args:?}: exit {:?}, {got:?}\n   want {want:?}",
                out.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn jobs_past_the_cores_are_clamped_with_one_warning() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let warning = format!(
        "--jobs 100000 is more than the {cores} cores this process may use; {cores} threads are used"
    );
    let out = run("tracestat", &["-q", "--jobs", "100000", TRACE]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("tracestat: warning: {warning}\n")
    );
    let valid = Path::new("tests/bad_inputs/valid");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let out = run(
        "summary",
        &[
            "-j",
            "100000",
            "--input",
            valid.join("summary.tgz").to_str().unwrap(),
            "--schema",
            valid.join("rules.json").to_str().unwrap(),
            "--output",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().next(),
        Some(format!("summary: warning: {warning}").as_str()),
        "{stderr}"
    );
}
