//! Hardening II (docs/robustness.md): empty stall sections, rows outside
//! any device, control bytes in messages, permissions and links of outputs,
//! full disks, unbounded lines and whole files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use unitrace_system_tests::{repo_root, tool_binary};

fn run(tool: &str, args: &[&str], dir: &Path) -> Output {
    Command::new(tool_binary(tool))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("tool runs")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stall_lines() -> Vec<String> {
    fs::read_to_string(repo_root().join("testdata/charts/stalls.csv"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_stall_header_without_rows_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let lines = stall_lines();
    fs::write(dir.path().join("h.csv"), lines[..4].join("\n") + "\n").unwrap();
    let out = run("analyze", &["-o", "s.pdf", "h.csv"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        stderr(&out),
        "analyze: h.csv: device 0 has a stall header but no rows: nothing to draw\n"
    );
    assert!(!dir.path().join("s.pdf").exists());
}

#[test]
fn stall_rows_before_the_first_banner_are_dropped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let lines = stall_lines();
    // Header and two rows, then the whole file with its banner.
    let text = format!("{}\n{}\n", lines[3..6].join("\n"), lines.join("\n"));
    fs::write(dir.path().join("p.csv"), text).unwrap();
    let out = run("analyze", &["-o", "s.pdf", "p.csv"], dir.path());
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        stderr(&out),
        "analyze: warning: p.csv:1: rows before the first device banner belong to no device; dropped\n"
    );
    assert!(dir.path().join("s.pdf").exists());
}

#[test]
fn control_bytes_of_an_input_are_escaped_in_the_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let lines = stall_lines();
    let bad = lines[4].replacen("20", "\u{1b}[31mzz\r", 1);
    fs::write(
        dir.path().join("e.csv"),
        format!("{}\n{bad}\n", lines[..4].join("\n")),
    )
    .unwrap();
    let out = run("analyze", &["-o", "s.pdf", "e.csv"], dir.path());
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(!err.contains('\u{1b}') && !err.contains('\r'), "{err:?}");
    assert!(err.contains("\\x1b[31mzz\\r"), "{err:?}");
    assert_eq!(err.lines().count(), 1, "{err:?}");
}

/// The mode bits of a file.
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn outputs_honour_the_umask_keep_a_replaced_mode_and_follow_links() {
    let dir = tempfile::tempdir().unwrap();
    let schema = repo_root().join("testdata/categorize/edge.ini");
    fs::copy(&schema, dir.path().join("s.ini")).unwrap();
    let categorize = tool_binary("categorize");
    let with_umask = |umask: &str, out: &str| {
        let status = Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
            .arg(&categorize)
            .args(["--ini", "s.ini", "--json", out])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
    };
    with_umask("077", "new.json");
    assert_eq!(mode(&dir.path().join("new.json")), 0o600);
    with_umask("002", "new2.json");
    assert_eq!(mode(&dir.path().join("new2.json")), 0o664);
    // A replaced file keeps its mode whatever the umask.
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(
            dir.path().join("new.json"),
            fs::Permissions::from_mode(0o640),
        )
        .unwrap();
    }
    with_umask("022", "new.json");
    assert_eq!(mode(&dir.path().join("new.json")), 0o640);
    // An output that is a link: the target is written, the link stays.
    fs::create_dir(dir.path().join("real")).unwrap();
    std::os::unix::fs::symlink("real/t.json", dir.path().join("link.json")).unwrap();
    with_umask("022", "link.json");
    let link_meta = fs::symlink_metadata(dir.path().join("link.json")).unwrap();
    assert!(link_meta.file_type().is_symlink());
    assert_eq!(
        fs::read(dir.path().join("real/t.json")).unwrap(),
        fs::read(dir.path().join("new2.json")).unwrap()
    );
}

#[test]
fn roofline_profile_lines_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let testdata = repo_root().join("testdata/roofline");
    let out = Command::new(tool_binary("roofline"))
        .arg("--compute")
        .arg("/dev/zero")
        .arg("--memory")
        .arg(testdata.join("gen_fp16_memory.txt"))
        .arg("--device")
        .arg(testdata.join("PVC_1tile.csv"))
        .arg("--output")
        .arg(dir.path().join("r.html"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("roofline: /dev/zero:1: "), "{err}");
    assert!(err.contains("longer than"), "{err}");
}

#[test]
fn whole_file_readers_have_a_size_cap() {
    let dir = tempfile::tempdir().unwrap();
    // categorize's INI schema and mergetrace's JSON schema from /dev/zero.
    let out = run(
        "categorize",
        &["--ini", "/dev/zero", "--json", "o.json"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.starts_with("categorize: /dev/zero: ") && err.contains("larger than"),
        "{err}"
    );
    fs::write(dir.path().join("t.json"), "{\"traceEvents\": []}\n").unwrap();
    let out = run(
        "mergetrace",
        &[
            "-o",
            "all.json",
            "--stats",
            "--schema",
            "/dev/zero",
            "t.json",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.starts_with("mergetrace: /dev/zero: ") && err.contains("larger than"),
        "{err}"
    );
    // analyze's option file.
    let out = run("analyze", &["-f", "/dev/zero", "x.csv"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.starts_with("analyze: /dev/zero: ") && err.contains("larger than"),
        "{err}"
    );
}

/// A 5 MB tmpfs (root only): a full disk fails the run with one line that
/// names the final output, and leaves no output of the run, not even the
/// ones already written in full.
#[test]
fn a_full_disk_names_the_output_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=5m", "tmpfs"])
        .arg(&small)
        .output();
    if !mounted.as_ref().is_ok_and(|o| o.status.success()) {
        println!("skipped: cannot mount a 5 MB tmpfs (needs root): {mounted:?}");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(small.clone());
    // ~8 MB of trace: does not fit.
    let trace = dir.path().join("t.json");
    let events: Vec<String> = (0..110_000)
        .map(|i| {
            format!(
                "{{\"ph\":\"X\",\"name\":\"k{}\",\"pid\":1,\"tid\":1,\"ts\":{i}.0,\"dur\":1.0}}",
                i % 7
            )
        })
        .collect();
    fs::write(
        &trace,
        format!("{{\"traceEvents\": [\n{}\n]}}\n", events.join(",\n")),
    )
    .unwrap();
    let out = Command::new(tool_binary("mergetrace"))
        .arg("-o")
        .arg(small.join("all.json"))
        .arg("--stats")
        .arg(small.join("st.csv"))
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("{}: ", small.join("all.json").display())),
        "{err}"
    );
    assert!(!err.contains("unitrace-tmp"), "{err}");
    assert_eq!(fs::read_dir(&small).unwrap().count(), 0, "nothing left");

    // analyze: the chart fits elsewhere, the --data file does not.
    let lines = fs::read_to_string(repo_root().join("testdata/charts/query.csv")).unwrap();
    let lines: Vec<&str> = lines.lines().collect();
    let mut csv = lines[..4].join("\n") + "\n";
    let rows: Vec<&str> = lines[4..]
        .iter()
        .copied()
        .filter(|l| !l.is_empty())
        .collect();
    for i in 0..5_000 {
        let row = rows[i % rows.len()];
        let (kernel, after) = row.split_at(row.find("\",").unwrap() + 2);
        csv.push_str(&format!(
            "{kernel}{}{}\n\n",
            i + 1,
            &after[after.find(',').unwrap()..]
        ));
    }
    let input = dir.path().join("big.csv");
    fs::write(&input, csv).unwrap();
    let pdf = dir.path().join("x.pdf");
    let data = small.join("x.csv");
    // Leave ~200 kB free: the --data file (~400 kB) does not fit.
    fs::write(
        small.join("filler"),
        vec![b'x'; 5 * 1024 * 1024 - 200 * 1024],
    )
    .unwrap();
    let out = Command::new(tool_binary("analyze"))
        .args(["-i", "0", "-m", "XVE_ACTIVE[%]", "-y", "pct", "-o"])
        .arg(&pdf)
        .arg("--data")
        .arg(&data)
        .arg(&input)
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // The error is the last line (a run of over 1,000 pages first says
    // how many it is about to write).
    assert!(
        err.lines().last().unwrap_or("").starts_with(&format!(
            "analyze: {}: cannot write the --data file: ",
            data.display()
        )),
        "{err}"
    );
    assert!(
        !pdf.exists(),
        "the chart is not committed without its --data file"
    );
    assert_eq!(
        fs::read_dir(&small).unwrap().count(),
        1,
        "only the filler is left"
    );
    let leftovers: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".unitrace-tmp."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
