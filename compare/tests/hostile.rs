//! Hostile inputs (docs/compare.md#suspicious-values,
//! docs/robustness.md#bounds): a summary-tarball member that inflates far
//! beyond memory, metric CSVs with 150k columns, negative and non-finite
//! values, control bytes in kernel names.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use unitrace_system_tests::{output_within, repo_root};

fn compare_in(dir: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_compare"));
    command.args(args).current_dir(dir);
    output_within(&mut command, Duration::from_secs(120)).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `head` followed by `line` repeated up to `size` bytes in all.
struct Filler {
    head: Vec<u8>,
    line: &'static [u8],
    pos: u64,
    size: u64,
}

impl Read for Filler {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() && self.pos < self.size {
            let p = self.pos as usize;
            buf[n] = if p < self.head.len() {
                self.head[p]
            } else {
                self.line[(p - self.head.len()) % self.line.len()]
            };
            n += 1;
            self.pos += 1;
        }
        Ok(n)
    }
}

/// A `.tgz` of one member: a valid unitrace log, then filler lines the
/// summary parser reads past, `size` bytes in all.
fn tarball_bomb(path: &Path, size: u64) {
    let head = fs::read(repo_root().join("tests/bad_inputs/valid/output.4100.1.txt")).unwrap();
    let file = fs::File::create(path).unwrap();
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let mut header = tar::Header::new_gnu();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_cksum();
    let filler = Filler {
        head,
        line: b"[unitrace] a log line that no summary table holds\n",
        pos: 0,
        size,
    };
    tar.append_data(
        &mut header,
        "rank_0/output.4100.1.txt",
        std::io::BufReader::with_capacity(1 << 20, filler),
    )
    .unwrap();
    tar.into_inner().unwrap().finish().unwrap().flush().unwrap();
}

#[test]
fn a_member_of_gigabytes_streams_within_a_memory_limit() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.tgz");
    // 1.5 GB inflated: reading it whole (as compare did) needs more than
    // the 1 GiB of address space the run gets.
    tarball_bomb(&bomb, 1536 << 20);
    assert!(fs::metadata(&bomb).unwrap().len() < 32 << 20);
    let json = dir.path().join("c.json");
    let mut command = Command::new("prlimit");
    command
        .arg(format!("--as={}", 1u64 << 30))
        .arg(env!("CARGO_BIN_EXE_compare"))
        .args(["-q", "bomb.tgz", "bomb.tgz", "--json", "c.json"])
        // One malloc arena per thread would reserve 64 MiB of address
        // space each, which is not memory in use.
        .env("MALLOC_ARENA_MAX", "2")
        .current_dir(dir.path());
    let out = output_within(&mut command, Duration::from_secs(300)).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let doc: Value = serde_json::from_slice(&fs::read(&json).unwrap()).unwrap();
    // The log's four device kernels, read from the start of the member.
    assert_eq!(doc["sections"][0]["section"], "kernel");
    assert_eq!(doc["sections"][0]["matched"], 4);
    let total = doc["baseline_total_us"].as_f64().unwrap();
    assert!((total - 5400.618).abs() < 1e-9, "{total}");
}

/// A metric CSV of `columns` metrics (short names, so that a line stays
/// under the 1 MiB cap) and three instances of one kernel; `shift` moves
/// every value.
fn wide_csv(path: &Path, columns: usize, shift: u64) {
    let mut text = String::from("=== Device #0 Metrics ===\n\nKernel,GlobalInstanceId,GpuTime[ns]");
    for c in 0..columns {
        text.push_str(&format!(",m{c:x}"));
    }
    text.push('\n');
    for inst in 0..3u64 {
        text.push_str(&format!("gemm,{},{}", inst + 1, 1000 + inst + shift));
        for c in 0..columns as u64 {
            text.push_str(&format!(",{}", (c + inst + shift) % 10));
        }
        text.push('\n');
    }
    fs::write(path, text).unwrap();
}

#[test]
fn metric_csvs_of_150k_columns_compare_in_seconds() {
    let dir = tempfile::tempdir().unwrap();
    wide_csv(&dir.path().join("a.csv"), 150_000, 0);
    wide_csv(&dir.path().join("b.csv"), 150_000, 1);
    // The bound only turns a hang into a failure: the quadratic matching
    // took 84 s on the 2-core machine where the linear one takes 1 s.
    let out = compare_in(dir.path(), &["-q", "a.csv", "b.csv", "--csv", "d.csv"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let table = fs::read_to_string(dir.path().join("d.csv")).unwrap();
    // Every metric of the kernel is paired: mean, median and max each.
    let rows: Vec<&str> = table.lines().filter(|l| l.contains(",m249e0.")).collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    // m249e0 is column 149984 (0x249e0): values (c + row + shift) % 10,
    // baseline 4, 5, 6 (mean 5), candidate 5, 6, 7 (mean 6); the three
    // rows of one kernel without a query id are one instance.
    assert!(
        table
            .lines()
            .any(|l| l.contains(",m249e0.mean,") && l.contains(",5,6,")),
        "{rows:?}"
    );
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

#[test]
fn non_finite_and_negative_values_are_warned_by_rule() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let head = "=== Device #0 Metrics ===\n\nKernel,GlobalInstanceId,GpuTime[ns],XVE_ACTIVE[%]\n";
    write(
        d,
        "a.csv",
        &format!("{head}k,1,1000,50\nk,2,inf,60\nk,3,-500,nan\n"),
    );
    write(d, "b.csv", &format!("{head}k,1,1000,50\n"));
    let out = compare_in(d, &["-q", "a.csv", "b.csv", "--json", "c.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "compare: warning: a.csv:5: column `GpuTime[ns]`: `inf` is not a finite number; left out of its metric (2 such values in this file)\n\
         compare: warning: a.csv:6: column `GpuTime[ns]`: `-500` is a negative duration; summed as read (1 such value in this file)\n"
    );
    let doc: Value = serde_json::from_slice(&fs::read(d.join("c.json")).unwrap()).unwrap();
    let row = &doc["sections"][0]["rows"][0];
    // The three rows of `k` without a query id are one instance; its time
    // is the mean of its finite values, the negative one as read:
    // (1000 - 500) / 2 ns.
    assert_eq!(row["baseline_us"], 0.25);
    // XVE_ACTIVE: the mean of 50 and 60, the nan left out.
    let metric = row["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m[0] == "XVE_ACTIVE[%].mean")
        .unwrap();
    assert_eq!(metric[1], 55.0);

    // A summary JSON with a negative time.
    write(
        d,
        "s1.json",
        "{\"gemm_time\": -5, \"gemm_calls\": 1, \"comm_time\": -7, \"total_time\": 10}",
    );
    write(
        d,
        "s2.json",
        "{\"gemm_time\": 5, \"gemm_calls\": 1, \"total_time\": 10}",
    );
    let out = compare_in(d, &["-q", "s1.json", "s2.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "compare: warning: s1.json: `comm_time` is negative (-7); compared as read (2 negative times in this file)\n"
    );
}

/// A gzip tarball of one member.
fn tgz(path: &Path, name: &str, data: &[u8]) {
    let gz =
        flate2::write::GzEncoder::new(fs::File::create(path).unwrap(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let mut header = tar::Header::new_gnu();
    header.set_size(data.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    tar.append_data(&mut header, name, data).unwrap();
    tar.into_inner().unwrap().finish().unwrap();
}

#[test]
fn negative_summary_times_are_summed_with_summary_s_warning() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let valid =
        fs::read_to_string(repo_root().join("tests/bad_inputs/valid/output.4100.1.txt")).unwrap();
    let negative = valid.replacen(", 21, 974128, ", ", 21, -974128, ", 1);
    assert_ne!(negative, valid);
    tgz(&d.join("neg.tgz"), "output.4100.1.txt", negative.as_bytes());
    tgz(&d.join("ok.tgz"), "output.4100.1.txt", valid.as_bytes());
    let out = compare_in(d, &["-q", "neg.tgz", "ok.tgz", "--json", "c.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let line = valid
        .lines()
        .position(|l| l.contains(", 21, 974128, "))
        .unwrap()
        + 1;
    assert_eq!(
        stderr(&out),
        format!("compare: warning: neg.tgz: output.4100.1.txt:{line}: negative \"Time (ns)\" is summed as read (once in this member)\n")
    );
    let doc: Value = serde_json::from_slice(&fs::read(d.join("c.json")).unwrap()).unwrap();
    // 5400.618 us with 974.128 counted negative instead.
    let total = doc["baseline_total_us"].as_f64().unwrap();
    assert!((total - (5400.618 - 2.0 * 974.128)).abs() < 1e-9, "{total}");
}

#[test]
fn control_bytes_of_kernel_names_are_escaped_on_every_printed_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let head = "=== Device #0 Metrics ===\n\nKernel,GlobalInstanceId,GpuTime[ns]\n";
    write(d, "a.csv", &format!("{head}\"k\u{1b}[31m\rx\",1,1000\n"));
    write(d, "b.csv", &format!("{head}\"k\u{1b}[31m\rx\",1,3000\n"));
    let out = compare_in(d, &["a.csv", "b.csv", "--fail-if", "kernel:k*>+10%"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
    assert!(
        !all.iter().any(|&b| b == 0x1b || b == b'\r'),
        "{}",
        String::from_utf8_lossy(&all)
    );
    let err = stderr(&out);
    assert!(err.contains("k\\x1b[31m\\rx"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("k\\x1b[31m\\rx"));
}

fn gzip_of(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A side with host events but no device work (a PyTorch profile without
/// the device activity) is an error naming it, on either side, never a
/// verdict that every kernel vanished.
#[test]
fn a_side_without_device_work_is_an_error_never_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let base = repo_root().join("testdata/compare/base/app.1000.0.json");
    let base = base.to_string_lossy().into_owned();
    fs::write(
        dir.path().join("host_only.json"),
        r#"{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":10,"dur":5}]}"#,
    )
    .unwrap();
    let why = "host_only.json: no device work (no kernel, copy or fill) in these traces: \
               nothing to compare (was the device activity recorded? torch.profiler records \
               it with ProfilerActivity.XPU or CUDA)";
    for args in [
        [base.as_str(), "host_only.json"],
        ["host_only.json", base.as_str()],
    ] {
        let o = compare_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_eq!(stderr(&o), format!("compare: {why}\n"));
        assert!(
            o.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
}

/// A candidate trace that yields no event (cut right after
/// `"traceEvents": [`, or in its gzip header or early gzip data) is one
/// error line naming it and why, exit 1, no verdict: it never reads as
/// work that "fell 100%" (docs/compare.md#inputs). Bytes after a whole
/// gzip member are one warning, and the comparison is that of the whole
/// trace.
#[test]
fn a_side_that_yields_no_event_is_an_error_never_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let base = repo_root().join("testdata/compare/base/app.1000.0.json");
    let text = fs::read(&base).unwrap();
    let bracket = text.iter().position(|&c| c == b'[').unwrap() + 1;
    let gz = gzip_of(&text);
    let cases: [(&str, &[u8], &str); 3] = [
        (
            "after_bracket.json",
            &text[..bracket],
            "cut short (writer killed?): no trace events before the cut",
        ),
        (
            "header.json.gz",
            &gz[..9],
            "gzip stream cut short in a member's header (writer killed?): no trace events",
        ),
        (
            "data.json.gz",
            &gz[..12],
            "gzip stream cut short (writer killed?): no trace events before the cut",
        ),
    ];
    let base = base.to_string_lossy().into_owned();
    for (name, bytes, why) in cases {
        fs::write(dir.path().join(name), bytes).unwrap();
        let o = compare_in(dir.path(), &["-q", &base, name]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        assert_eq!(stderr(&o), format!("compare: {name}: {why}\n"));
        assert!(!String::from_utf8_lossy(&o.stdout).contains("verdict"));
    }
    let mut junk = gz.clone();
    junk.extend_from_slice(&[0u8; 100]);
    fs::write(dir.path().join("junk.json.gz"), &junk).unwrap();
    let o = compare_in(dir.path(), &[&base, "junk.json.gz"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        format!(
            "compare: warning: junk.json.gz: 100 bytes after the end of the gzip data at byte {} \
             (zero bytes); ignored\n",
            gz.len()
        )
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("verdict: unchanged"), "{out}");
}
