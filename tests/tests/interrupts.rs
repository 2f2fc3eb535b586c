//! Interrupted runs leave nothing behind (docs/robustness.md#outputs):
//! SIGINT, SIGTERM and SIGHUP in the middle of writing remove every
//! temporary file and exit with 130, 143 and 129; the temporary files of a
//! run killed with SIGKILL are removed by the next run in the same folder.
//!
//! Each test starts the tool on a generated input big enough that it is
//! still writing when the signal comes: it waits until the temporary
//! output has data on disk, then signals. A run that finished first (a
//! very fast machine) is retried on an input twice as big.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use unitrace_system_tests::{repo_root, tool_binary};

const MARKER: &str = ".unitrace-tmp.";

/// The temporary files in `dir`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().contains(MARKER))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Writes a Chrome trace of `events` complete events (~70 bytes each).
fn write_trace(path: &Path, events: u64) {
    let mut f = BufWriter::new(fs::File::create(path).expect("trace"));
    f.write_all(b"{\"traceEvents\": [\n").unwrap();
    for i in 0..events {
        if i > 0 {
            f.write_all(b",\n").unwrap();
        }
        write!(
            f,
            "{{\"ph\":\"X\",\"name\":\"kernel_{}\",\"pid\":1,\"tid\":1,\"ts\":{}.000,\"dur\":5.000}}",
            i % 50,
            i * 10
        )
        .unwrap();
    }
    f.write_all(b"\n]}\n").unwrap();
    f.flush().unwrap();
}

/// A metric CSV of `rows` query rows (one chart page each with `-i 0`),
/// made from the rows of `testdata/charts/query.csv`.
fn write_metric_csv(path: &Path, rows: usize) {
    let sample = fs::read_to_string(repo_root().join("testdata/charts/query.csv")).unwrap();
    let lines: Vec<&str> = sample.lines().collect();
    let header = lines[..4].join("\n");
    let data: Vec<&str> = lines[4..]
        .iter()
        .copied()
        .filter(|l| !l.is_empty())
        .collect();
    let mut f = BufWriter::new(fs::File::create(path).expect("csv"));
    writeln!(f, "{header}").unwrap();
    for i in 0..rows {
        // `"kernel",ID,rest…`: give every row its own instance id.
        let row = data[i % data.len()];
        let (kernel, after) = row.split_at(row.find("\",").unwrap() + 2);
        let rest = &after[after.find(',').unwrap()..];
        writeln!(f, "{kernel}{}{rest}\n", i + 1).unwrap();
    }
    f.flush().unwrap();
}

/// The tool as a child whose INT, TERM and HUP have their default
/// disposition. A signal ignored by the test's own parent (`nohup`, a
/// script's background job) stays ignored across `exec`, and the tools
/// leave such a signal ignored on purpose (docs/robustness.md#outputs): run
/// so, the test would see the tool finish instead of stopping.
fn tool(name: &str) -> Command {
    tool_with_hup(name, libc::SIG_DFL)
}

/// [`tool`], with SIGHUP's disposition `hup` (`SIG_IGN`: as under `nohup`).
fn tool_with_hup(name: &str, hup: libc::sighandler_t) -> Command {
    use std::os::unix::process::CommandExt;
    let mut c = Command::new(tool_binary(name));
    // SAFETY: only async-signal-safe calls (signal) between fork and exec.
    unsafe {
        c.pre_exec(move || {
            for sig in [libc::SIGINT, libc::SIGTERM] {
                libc::signal(sig, libc::SIG_DFL);
            }
            libc::signal(libc::SIGHUP, hup);
            Ok(())
        });
    }
    c
}

/// `mergetrace -o OUT_DIR/all.json INPUT` started from `mergetrace`.
fn merge_into(mut mergetrace: Command, input: &Path, out_dir: &Path) -> Child {
    mergetrace
        .arg("-o")
        .arg(out_dir.join("all.json"))
        .arg(input)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mergetrace")
}

fn send(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .args(["-s", signal, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill -s {signal} failed");
}

/// Waits until `want` temporary files exist in `dir` and hold data (the
/// tool is mid-write); false if the tool ended first.
fn wait_mid_write(child: &mut Child, dir: &Path, want: usize) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if child.try_wait().expect("try_wait").is_some() {
            return false;
        }
        let temps = temp_files(dir);
        let with_data = temps
            .iter()
            .filter(|p| fs::metadata(p).map_or(0, |m| m.len()) > 0)
            .count();
        if temps.len() >= want && with_data >= 1 {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("the tool neither wrote nor ended within 60 s");
}

/// Runs `start(scale)` until it is caught mid-write, signals it and checks
/// the exit code and the folder.
fn interrupt(
    dir: &Path,
    signal: &str,
    code: i32,
    temps_expected: usize,
    mut start: impl FnMut(u64) -> Child,
) {
    // What each try came to, for the message when none was caught.
    let mut tries = Vec::new();
    for scale in [1u64, 2, 4, 8] {
        let mut child = start(scale);
        if !wait_mid_write(&mut child, dir, temps_expected) {
            // Finished before the signal: clean up and try a bigger input;
            // a failure is the tool's, not the timing's.
            let out = child.wait_with_output().expect("wait");
            assert!(
                out.status.success(),
                "SIG{signal}, scale {scale}: the tool failed before any signal: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            tries.push(format!("scale {scale}: ended before its output had data"));
            for entry in fs::read_dir(dir).unwrap().flatten() {
                let _ = fs::remove_file(entry.path());
            }
            continue;
        }
        send(&child, signal);
        let out = child.wait_with_output().expect("wait");
        if out.status.success() {
            // The signal came after the last rename: finished first.
            tries.push(format!("scale {scale}: finished before the signal"));
            for entry in fs::read_dir(dir).unwrap().flatten() {
                let _ = fs::remove_file(entry.path());
            }
            continue;
        }
        assert_eq!(
            out.status.code(),
            Some(code),
            "SIGNAL {signal}: stderr {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(temp_files(dir), Vec::<PathBuf>::new(), "after SIG{signal}");
        return;
    }
    panic!("SIG{signal}: the tool always finished before it could be interrupted: {tries:?}");
}

#[test]
fn mergetrace_removes_its_temporary_files_on_each_signal() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("rank.0.json");
    let out_dir = dir.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    let mut written_scale = 0;
    for (signal, code) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        // The `--stats` file is created after the trace: one temporary file
        // while the trace is written.
        interrupt(&out_dir, signal, code, 1, |scale| {
            if scale != written_scale {
                // ~60 MB per scale step.
                write_trace(&input, 900_000 * scale);
                written_scale = scale;
            }
            tool("mergetrace")
                .arg("-o")
                .arg(out_dir.join("all.json"))
                .arg("--stats")
                .arg(out_dir.join("st.csv"))
                .arg(&input)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("mergetrace")
        });
        assert!(!out_dir.join("all.json").exists());
        assert!(!out_dir.join("st.csv").exists());
    }
}

#[test]
fn analyze_removes_the_pdf_and_data_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.csv");
    let out_dir = dir.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    let mut written_scale = 0;
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        // Both temporary files (chart and --data) exist once the first page
        // is drawn.
        interrupt(&out_dir, signal, code, 2, |scale| {
            if scale != written_scale {
                write_metric_csv(&input, 40_000 * scale as usize);
                written_scale = scale;
            }
            tool("analyze")
                .args(["-i", "0", "-m", "XVE_ACTIVE[%],XVE_STALL[%]", "-y", "pct"])
                .arg("-o")
                .arg(out_dir.join("x.pdf"))
                .arg("--data")
                .arg(out_dir.join("x.csv"))
                .arg(&input)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("analyze")
        });
        assert_eq!(fs::read_dir(&out_dir).unwrap().count(), 0);
    }
}

/// SIGKILL cannot be caught; the next run in the folder removes what the
/// killed run left, and only that.
#[test]
fn a_later_run_removes_the_temporary_files_of_a_killed_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("rank.0.json");
    let out_dir = dir.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    let mut written_scale = 0;
    let mut left = Vec::new();
    for scale in [1u64, 2, 4, 8] {
        if scale != written_scale {
            write_trace(&input, 900_000 * scale);
            written_scale = scale;
        }
        let mut child = merge_into(tool("mergetrace"), &input, &out_dir);
        if wait_mid_write(&mut child, &out_dir, 1) {
            child.kill().expect("SIGKILL");
            child.wait().unwrap();
            left = temp_files(&out_dir);
            break;
        }
        let _ = child.wait();
    }
    assert_eq!(left.len(), 1, "SIGKILL leaves the temporary file");
    let name = left[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(".all.json.unitrace-tmp."), "{name}");
    // A file of the same pattern from a live process (this test) stays.
    let mine = out_dir.join(format!(
        ".other.json{MARKER}{}.{}.0123abcd",
        name.split('.').nth(4).unwrap(),
        std::process::id()
    ));
    fs::write(&mine, b"in use").unwrap();
    let small = dir.path().join("small.json");
    write_trace(&small, 10);
    let status = tool("mergetrace")
        .arg("-o")
        .arg(out_dir.join("small-all.json"))
        .arg(&small)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!left[0].exists(), "the stale temporary file was removed");
    assert!(mine.exists(), "a live process's file was kept");
}

/// A tool started with SIGHUP ignored (`nohup`) keeps it ignored
/// (docs/robustness.md#outputs): a SIGHUP mid-write neither stops it nor
/// removes its output, and the run completes.
#[test]
fn a_signal_inherited_as_ignored_stays_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("rank.0.json");
    let out_dir = dir.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    for scale in [1u64, 2, 4, 8] {
        write_trace(&input, 900_000 * scale);
        let mut child = merge_into(tool_with_hup("mergetrace", libc::SIG_IGN), &input, &out_dir);
        let caught = wait_mid_write(&mut child, &out_dir, 1);
        if caught {
            send(&child, "HUP");
        }
        let out = child.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "scale {scale}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out_dir.join("all.json").exists());
        assert_eq!(temp_files(&out_dir), Vec::<PathBuf>::new());
        if caught {
            return;
        }
        fs::remove_file(out_dir.join("all.json")).unwrap();
    }
    panic!("mergetrace always finished before its output had data");
}
