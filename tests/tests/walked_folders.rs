//! Folders the tools walk (docs/robustness.md#walked-folders): a
//! `--result-dir` tree, a folder of traces given to `compare`, a folder read
//! like a summary tarball. One tree holds what a busy cluster leaves behind:
//! a FIFO and a socket under input names, a file its reader may not open, a
//! link loop and a link out of the tree. Every tool that walks must skip the
//! first four with one warning each, follow the last with one warning, and
//! finish; a hang fails the test after [`LIMIT`] instead of hanging the
//! suite.
//!
//! As root every file can be opened, so the tools then run as `nobody`
//! (`setpriv`), for whom the mode-000 file is unreadable.

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use unitrace_system_tests::{output_within, repo_root, tool_binary};

/// Far above what a run needs; only turns a hang into a failure.
const LIMIT: Duration = Duration::from_secs(60);

/// The hostile tree `results/` in a scratch folder, and `out/` beside it
/// (writable by the user the tools run as).
struct Tree {
    dir: tempfile::TempDir,
    /// `.../elsewhere`, the target of the link out of the tree, as the
    /// warning names it (canonical).
    elsewhere: PathBuf,
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

fn copy(from: &str, to: &Path) {
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::copy(repo_root().join(from), to).unwrap();
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        let r = top.join("results");
        copy(
            "testdata/trace/two/python.100003.0.json",
            &r.join("rank_0.app.100/chrome_trace.json"),
        );
        copy(
            "testdata/resultdir/metrics_tree/rank_0.app.100/metrics/metrics_0.csv",
            &r.join("rank_0.app.100/metrics/metrics_0.csv"),
        );
        copy(
            "tests/bad_inputs/valid/output.4100.1.txt",
            &r.join("rank_0.app.100/device_timing.txt"),
        );
        fs::create_dir_all(r.join("rank_1.app.101/metrics")).unwrap();
        mkfifo(&r.join("rank_1.app.101/chrome_trace.json"));
        mkfifo(&r.join("rank_1.app.101/metrics/metrics_0.csv"));
        fs::create_dir_all(r.join("rank_2.app.102")).unwrap();
        // The socket file stays after the listener is closed.
        drop(
            std::os::unix::net::UnixListener::bind(r.join("rank_2.app.102/chrome_trace.json"))
                .unwrap(),
        );
        copy(
            "testdata/trace/two/python.100063.1.json",
            &r.join("rank_3.app.103/chrome_trace.json"),
        );
        std::os::unix::fs::symlink("..", r.join("rank_0.app.100/loop")).unwrap();
        copy(
            "testdata/trace/two/python.100063.1.json",
            &top.join("elsewhere/chrome_trace.json"),
        );
        std::os::unix::fs::symlink("../elsewhere", r.join("rank_4.app.104")).unwrap();
        fs::create_dir(top.join("out")).unwrap();
        // Readable by `nobody`; the output folder writable.
        let mut stack = vec![top.to_path_buf()];
        while let Some(p) = stack.pop() {
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
                stack.extend(fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            } else if meta.is_file() {
                fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
            }
        }
        fs::set_permissions(top.join("out"), fs::Permissions::from_mode(0o777)).unwrap();
        let locked = r.join("rank_3.app.103/chrome_trace.json");
        fs::set_permissions(locked, fs::Permissions::from_mode(0o000)).unwrap();
        let elsewhere = fs::canonicalize(top.join("elsewhere")).unwrap();
        Tree { dir, elsewhere }
    }

    fn top(&self) -> &Path {
        self.dir.path()
    }

    /// `tool args...` in the scratch folder, as `nobody` when run as root.
    fn command(&self, tool: &str, args: &[&str]) -> Command {
        let mut command = if is_root() {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(tool_binary(tool));
            c
        } else {
            Command::new(tool_binary(tool))
        };
        command
            .args(args)
            .current_dir(self.top())
            .env_remove("RUST_BACKTRACE");
        command
    }

    fn run(&self, tool: &str, args: &[&str]) -> Output {
        output_within(&mut self.command(tool, args), LIMIT)
            .unwrap_or_else(|e| panic!("{tool} {args:?}: {e}"))
    }

    /// The walk's warnings every tool prints, in path order.
    fn warnings(&self, tool: &str) -> Vec<String> {
        [
            "results/rank_0.app.100/loop: a link to the folder results, walked already (a loop or a second name); skipped".to_string(),
            "results/rank_1.app.101/chrome_trace.json: a FIFO, not a regular file; skipped".to_string(),
            "results/rank_1.app.101/metrics/metrics_0.csv: a FIFO, not a regular file; skipped".to_string(),
            "results/rank_2.app.102/chrome_trace.json: a socket, not a regular file; skipped".to_string(),
            "results/rank_3.app.103/chrome_trace.json: cannot be read: Permission denied (os error 13); skipped".to_string(),
            format!("results/rank_4.app.104: a link out of the tree to {}; followed", self.elsewhere.display()),
        ]
        .into_iter()
        .map(|w| format!("{tool}: warning: {w}"))
        .collect()
    }
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The lines of `stderr` that the walk wrote.
fn walk_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.ends_with("; skipped") || l.ends_with("; followed"))
        .map(str::to_string)
        .collect()
}

fn assert_ran(out: &Output, what: &str) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn tracestat_skips_what_it_cannot_read_and_follows_the_link_out() {
    let tree = Tree::new();
    let out = tree.run("tracestat", &["--result-dir", "results"]);
    assert_ran(&out, "tracestat");
    assert_eq!(walk_lines(&out.stderr), tree.warnings("tracestat"));
    // Rank 0 in the tree and rank 4 through the link.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("tracestat: 2 ranks\n"), "{stdout}");
    // The events dataset walks the same tree the same way.
    let out = tree.run(
        "tracestat",
        &["--events", "out/ev", "--result-dir", "results"],
    );
    assert_ran(&out, "tracestat --events");
    assert_eq!(walk_lines(&out.stderr), tree.warnings("tracestat"));
    for rank in [0, 4] {
        let marker = tree.top().join(format!("out/ev/rank={rank}/_SUCCESS"));
        assert!(marker.is_file(), "{}", marker.display());
    }
}

#[test]
fn mergetrace_merges_the_readable_traces_only() {
    let tree = Tree::new();
    let out = tree.run(
        "mergetrace",
        &["--result-dir", "results", "-o", "out/all.json"],
    );
    assert_ran(&out, "mergetrace");
    assert_eq!(walk_lines(&out.stderr), tree.warnings("mergetrace"));
    let merged = fs::read_to_string(tree.top().join("out/all.json")).unwrap();
    // The two readable traces have these process ids.
    assert!(merged.contains("100003") && merged.contains("100063"));
}

#[test]
fn compare_walks_both_sides_and_a_plain_folder() {
    let tree = Tree::new();
    let out = tree.run("compare", &["-q", "results", "results"]);
    assert_ran(&out, "compare");
    let mut got = walk_lines(&out.stderr);
    got.sort();
    let mut want: Vec<String> = tree.warnings("compare");
    want.extend(tree.warnings("compare"));
    want.sort();
    assert_eq!(got, want);
    // A folder of `*.json` traces (no result-dir tree): the same rules.
    let plain = tree.top().join("plain");
    fs::create_dir(&plain).unwrap();
    fs::copy(
        repo_root().join("testdata/trace/two/python.100003.0.json"),
        plain.join("a.json"),
    )
    .unwrap();
    mkfifo(&plain.join("b.json"));
    fs::write(plain.join("c.json"), b"[]").unwrap();
    fs::set_permissions(plain.join("c.json"), fs::Permissions::from_mode(0o000)).unwrap();
    std::os::unix::fs::symlink(".", plain.join("loop")).unwrap();
    fs::set_permissions(&plain, fs::Permissions::from_mode(0o755)).unwrap();
    let out = tree.run("compare", &["-q", "plain", "plain"]);
    assert_ran(&out, "compare plain");
    let mut got = walk_lines(&out.stderr);
    got.sort();
    let mut want = vec![
        "compare: warning: plain/b.json: a FIFO, not a regular file; skipped",
        "compare: warning: plain/c.json: cannot be read: Permission denied (os error 13); skipped",
    ];
    want.extend(want.clone());
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn analyze_lists_the_readable_metric_files() {
    let tree = Tree::new();
    let out = tree.run("analyze", &["--result-dir", "-l", "results"]);
    assert_ran(&out, "analyze");
    assert_eq!(walk_lines(&out.stderr), tree.warnings("analyze"));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Device 0\n"));
}

#[test]
fn summary_reads_a_folder_without_blocking() {
    let tree = Tree::new();
    let rules = repo_root().join("tests/bad_inputs/valid/rules.json");
    let out = tree.run(
        "summary",
        &[
            "--input",
            "results",
            "--schema",
            rules.to_str().unwrap(),
            "--output",
            "out/s.json",
        ],
    );
    assert_ran(&out, "summary");
    assert_eq!(walk_lines(&out.stderr), tree.warnings("summary"));
    assert!(tree.top().join("out/s.json").is_file());
}

#[test]
fn uniview_serves_with_a_fifo_in_the_tree() {
    let tree = Tree::new();
    let options = repo_root().join("testdata/server/options.txt");
    let mut child = tree
        .command(
            "uniview",
            &[
                "--result-dir",
                "results",
                "--no-browser",
                "--port",
                "0",
                "--trace-port",
                "0",
                "-f",
                options.to_str().unwrap(),
            ],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("uniview starts");
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut port = None;
    while port.is_none() {
        match rx.recv_timeout(LIMIT) {
            Ok(line) => {
                port = line
                    .strip_prefix("Serving charts on http://127.0.0.1:")
                    .and_then(|rest| rest.split('/').next())
                    .and_then(|p| p.parse::<u16>().ok());
            }
            Err(_) => {
                let _ = child.kill();
                panic!("uniview did not start serving within {} s", LIMIT.as_secs());
            }
        }
    }
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port.unwrap())).unwrap();
    stream.set_read_timeout(Some(LIMIT)).unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut reply = String::new();
    let _ = stream.read_to_string(&mut reply);
    let _ = child.kill();
    let _ = child.wait();
    let mut stderr = Vec::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_end(&mut stderr)
        .unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(
        reply.contains("rank_0.app.100/metrics/metrics_0.csv"),
        "{reply}"
    );
    assert_eq!(walk_lines(&stderr), tree.warnings("uniview"));
}

#[test]
fn analyze_skips_what_it_cannot_read_in_a_shader_dump() {
    let tree = Tree::new();
    let top = tree.top();
    let dump = top.join("dump");
    fs::create_dir(&dump).unwrap();
    let valid = repo_root().join("tests/bad_inputs/valid");
    let asm = "OCL_asmade519c0b0efd44d_1_simd16_entry_0001.asm";
    fs::copy(valid.join("dump").join(asm), dump.join(asm)).unwrap();
    mkfifo(&dump.join("OCL_fifo.asm"));
    fs::write(dump.join("OCL_locked.asm"), b"//.kernel x\n").unwrap();
    fs::set_permissions(&dump, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(dump.join(asm), fs::Permissions::from_mode(0o644)).unwrap();
    fs::set_permissions(
        dump.join("OCL_locked.asm"),
        fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let stalls = valid.join("stalls_2dev.csv");
    let out = tree.run(
        "analyze",
        &[
            "-s",
            "dump",
            "-r",
            "out/report.txt",
            "-o",
            "out/stalls.pdf",
            stalls.to_str().unwrap(),
        ],
    );
    assert_ran(&out, "analyze -s");
    assert_eq!(
        walk_lines(&out.stderr),
        [
            "analyze: warning: dump/OCL_fifo.asm: a FIFO, not a regular file; skipped",
            "analyze: warning: dump/OCL_locked.asm: cannot be read: Permission denied (os error 13); skipped",
        ]
    );
    assert!(top.join("out/report.txt").is_file());
}
