//! Inputs that change while a tool reads them (docs/robustness.md#changed-inputs):
//! a trace truncated, extended or rewritten at any moment of its read
//! gives one line `TOOL: FILE: changed while read (was N bytes, now M)`,
//! exit 1, no output and no temporary file — never SIGBUS, a partial
//! output or a result that mixes two versions of the file.
//!
//! Deterministic: the tool runs with `UNITRACE_TEST_STOP_AT=OFFSET`, the
//! hook of `unitrace_core::watched_file`, and stops itself (SIGSTOP) right
//! after the read that reaches byte OFFSET of its input; the test changes
//! the file while it is stopped, then continues it (SIGCONT). Every tool
//! that reads traces is run this way — tracestat (report and `--events`),
//! compare and mergetrace — on plain JSON, `.pftrace` and gzip, at three
//! moments: early in the read (past the 64 KiB a tool may read ahead to tell
//! the format), in the middle, and at the last byte.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use unitrace_system_tests::tool_binary;

#[derive(Debug, Clone, Copy)]
enum Change {
    Truncate,
    Extend,
    Rewrite,
}

impl Change {
    /// Changes `path` (of `len` bytes); returns its new size.
    fn apply(self, path: &Path, len: u64) -> u64 {
        match self {
            Change::Truncate => {
                let f = fs::File::options().write(true).open(path).unwrap();
                f.set_len(len / 3).unwrap();
                len / 3
            }
            Change::Extend => {
                let mut f = fs::File::options().append(true).open(path).unwrap();
                f.write_all(&[b'\n'; 1000]).unwrap();
                len + 1000
            }
            Change::Rewrite => {
                // Another version of the same size, written as a rerun
                // writes it: truncated, then filled again.
                let mut bytes = fs::read(path).unwrap();
                for b in bytes.iter_mut() {
                    if b.is_ascii_digit() {
                        *b = b'0' + (*b - b'0' + 1) % 10;
                    }
                }
                fs::write(path, &bytes).unwrap();
                len
            }
        }
    }
}

/// The state letter of a process (`T`: stopped), `None` once it is gone.
fn state(pid: u32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

fn send(pid: u32, signal: &str) {
    let ok = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(ok.success(), "kill {signal} {pid}");
}

/// Every entry under `dir`, relative, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                todo.push(p);
            }
        }
    }
    out.sort();
    out
}

/// One tool run on a copy of `original` (at `input`, whose modification
/// time is set in the past, so that any write gives it another), stopped
/// after the read reaching byte `at`, changed, continued; checks the one
/// line, the exit code and that `out` is left as it was (empty).
fn run_changed(
    tool: &str,
    args: &[String],
    original: &Path,
    input: &Path,
    out: &Path,
    at: u64,
    change: Change,
) {
    fs::copy(original, input).unwrap();
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_500_000_000);
    fs::File::options()
        .write(true)
        .open(input)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let len = fs::metadata(input).unwrap().len();
    let _ = fs::remove_dir_all(out);
    fs::create_dir_all(out).unwrap();
    let logs = out.parent().unwrap();
    let (stdout, stderr) = (logs.join("stdout.txt"), logs.join("stderr.txt"));
    let what = format!("{tool} {args:?}, {change:?} at byte {at} of {len}");
    let mut child = Command::new(tool_binary(tool))
        .args(args)
        .env("UNITRACE_TEST_STOP_AT", at.to_string())
        .stdin(Stdio::null())
        .stdout(fs::File::create(&stdout).unwrap())
        .stderr(fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let pid = child.id();
    let start = Instant::now();
    loop {
        match state(pid) {
            Some('T') | Some('t') => break,
            Some('Z') | None => {
                let status = child.wait().unwrap();
                panic!(
                    "{what}: ended ({status}) without reaching the byte: {}",
                    fs::read_to_string(&stderr).unwrap()
                );
            }
            _ => {}
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what}: never stopped"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let now = change.apply(input, len);
    send(pid, "-CONT");
    let status = child.wait().unwrap();
    let err = fs::read_to_string(&stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{what}: {status}, {err}");
    assert_eq!(
        err,
        format!(
            "{tool}: {}: changed while read (was {len} bytes, now {now})\n",
            input.display()
        ),
        "{what}"
    );
    assert_eq!(entries(out), Vec::<String>::new(), "{what}: outputs left");
}

/// The inputs: a trace of about 4 MB as JSON and `.pftrace`, the JSON
/// gzipped, and a small trace for compare's other side.
struct Inputs {
    json: PathBuf,
    pftrace: PathBuf,
    gzip: PathBuf,
    small: PathBuf,
}

fn inputs(dir: &Path) -> Inputs {
    let gen = |sub: &str, args: &[&str]| -> PathBuf {
        let to = dir.join(sub);
        let o = Command::new(tool_binary("unitrace-gen"))
            .args(["--seed", "3", "trace"])
            .arg(&to)
            .args(["--ranks", "1", "-q"])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        to
    };
    let big = gen("big", &["--size", "4MB", "--format", "both"]);
    let small = gen("small", &["--events", "300"]);
    let find = |d: &Path, suffix: &str| -> PathBuf {
        fs::read_dir(d)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with(suffix))
            .unwrap()
    };
    let json = find(&big, ".json");
    let gzip = dir.join("big.json.gz");
    let mut gz = flate2::write::GzEncoder::new(
        fs::File::create(&gzip).unwrap(),
        flate2::Compression::fast(),
    );
    gz.write_all(&fs::read(&json).unwrap()).unwrap();
    gz.finish().unwrap();
    Inputs {
        pftrace: find(&big, ".pftrace"),
        json,
        gzip,
        small: find(&small, ".json"),
    }
}

#[test]
fn every_trace_reader_names_an_input_that_changed_while_read() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = inputs(dir.path());
    let out = dir.path().join("run").join("out");
    let s = |p: &Path| p.display().to_string();
    // (tool, original, the copy the tool reads, its arguments)
    type Args = fn(&str, &str, &str) -> Vec<String>;
    let cases: Vec<(&str, &Path, &str, Args)> = vec![
        ("tracestat", &inputs.json, "t.json", |i, o, _| {
            vec![i.into(), "--json".into(), format!("{o}/r.json")]
        }),
        ("tracestat", &inputs.json, "t.json", |i, o, _| {
            vec!["--events".into(), format!("{o}/ev"), i.into()]
        }),
        ("tracestat", &inputs.pftrace, "t.pftrace", |i, o, _| {
            vec![i.into(), "--csv".into(), format!("{o}/csv")]
        }),
        ("tracestat", &inputs.gzip, "t.json.gz", |i, o, _| {
            vec!["--events".into(), format!("{o}/ev"), i.into()]
        }),
        ("compare", &inputs.json, "t.json", |i, o, base| {
            vec![base.into(), i.into(), "--csv".into(), format!("{o}/d.csv")]
        }),
        ("mergetrace", &inputs.json, "t.json", |i, o, _| {
            vec!["-o".into(), format!("{o}/m.json"), i.into()]
        }),
        ("mergetrace", &inputs.json, "t.json", |i, o, base| {
            vec![
                "-o".into(),
                format!("{o}/m.json"),
                "--stats".into(),
                format!("{o}/s.csv"),
                i.into(),
                base.into(),
            ]
        }),
        ("mergetrace", &inputs.pftrace, "t.pftrace", |i, o, _| {
            vec!["-o".into(), format!("{o}/m.pftrace"), i.into()]
        }),
    ];
    for (tool, original, name, args) in cases {
        let input = dir.path().join("run").join(name);
        fs::create_dir_all(input.parent().unwrap()).unwrap();
        let len = fs::metadata(original).unwrap().len();
        let args = args(&s(&input), &s(&out), &s(&inputs.small));
        for at in [200_000, len / 2, len - 1] {
            for change in [Change::Truncate, Change::Extend, Change::Rewrite] {
                run_changed(tool, &args, original, &input, &out, at, change);
            }
        }
        let _ = fs::remove_file(&input);
    }
}
