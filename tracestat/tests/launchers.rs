//! Past one machine (docs/tracestat.md#past-one-machine) under the real
//! launchers: each way of running tracestat in pieces gives what one run
//! over all files gives (the `--json` report, or the events dataset's rows).
//!
//! * `scripts/tracestat-slurm.sh` through `sbatch` on the one-node Slurm
//!   cluster of `scripts/test-services.sh` (started by scripts/test.sh, and
//!   here if it is not running): the array job and its dependent combine
//!   job; the `--events` mode with one array task cancelled by `scancel`
//!   while it runs, then the same command submitted again. Jobs are waited
//!   for with `squeue` (their end states read with `squeue --states=all`:
//!   no accounting daemon, so no `sacct`).
//! * The mpiexec recipes of the page (report and events), run by bash as
//!   written there, with the real `mpiexec` (MPICH's Hydra, Debian package
//!   `mpich`) over 4 processes instead of 16.
//! * The GNU parallel recipe with the real `parallel`, and the Slurm
//!   script's `--local` mode.
//!
//! Without Slurm or MPI (not root, a container that forbids the daemons)
//! these tests fail when `CI` is set and skip loudly otherwise
//! (`common::unavailable`). The traces are `common::ranks`: 8 small ranks.

use crate::common::*;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/tracestat-slurm.sh")
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The report of one run, `--json` into `out`, run in `cwd`.
fn one_run(cwd: &Path, inputs: &[PathBuf], extra: &[&str], out: &Path) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_tracestat"))
        .current_dir(cwd)
        .args(inputs)
        .args(extra)
        .arg("--json")
        .arg(out)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    read_json(out)
}

#[test]
fn slurm_script_local_run_gives_the_report_of_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    // The script names the files by their real path; so does the one run.
    let files: Vec<PathBuf> = gen_files()
        .into_iter()
        .map(|f| f.canonicalize().unwrap())
        .collect();
    let o = Command::new("bash")
        .arg(script())
        .args(["--local", "--block", "2"])
        .arg(&work)
        .args(&files)
        .args(["--", "--tree=2", "--short-kernel", "20us"])
        .env("TRACESTAT", env!("CARGO_BIN_EXE_tracestat"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Three files in blocks of 2: two array tasks, two partials.
    let mut parts: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("part."))
        .collect();
    parts.sort();
    assert_eq!(parts, ["part.0.json", "part.1.json"]);
    let whole = one_run(
        dir.path(),
        &files,
        &["--tree=2", "--short-kernel", "20us"],
        &dir.path().join("whole.json"),
    );
    assert_eq!(read_json(&work.join("report.json")), whole);
    assert!(work.join("csv/breakdown.csv").is_file());
    assert!(work.join("csv/host_tree.csv").is_file());
    let page = std::fs::read_to_string(work.join("report.html")).unwrap();
    assert!(page.contains("<p>Straggler: rank "));
}

/// The fenced `sh` block that follows the paragraph whose first line starts
/// with `intro` in docs/tracestat.md.
fn doc_block(intro: &str) -> String {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/tracestat.md"))
            .unwrap();
    let at = page
        .lines()
        .position(|l| l.starts_with(intro))
        .unwrap_or_else(|| panic!("docs/tracestat.md: no line starting with {intro:?}"));
    // The rest of the paragraph, then the block.
    let block: Vec<&str> = page
        .lines()
        .skip(at + 1)
        .skip_while(|l| !l.trim().is_empty())
        .skip_while(|l| l.trim().is_empty())
        .collect();
    assert_eq!(block[0], "```sh", "{intro}: not followed by a sh block");
    block[1..]
        .iter()
        .take_while(|l| !l.starts_with("```"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A folder with an empty `run/` for the traces, and a `bin/` with
/// `tracestat` (the binary under test) for PATH.
fn workspace() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("run")).unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_tracestat"), bin.join("tracestat")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (dir, path)
}

/// The traces of `run/` as the recipes list them (`ls run/*.json`).
fn run_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("run"))
        .unwrap()
        .map(|e| Path::new("run").join(e.unwrap().file_name()))
        .collect();
    v.sort();
    v
}

/// What Open MPI needs to run as root with more processes than cores
/// (MPICH, which scripts/test.sh installs, ignores them).
const OPEN_MPI_AS_ROOT: [(&str, &str); 3] = [
    ("OMPI_ALLOW_RUN_AS_ROOT", "1"),
    ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
    ("OMPI_MCA_rmaps_base_oversubscribe", "1"),
];

/// A launcher's command in a process group of its own: in the test
/// binary's one group, two tests' MPICH launchers running at once killed
/// each other's shells (SIGPIPE) in about half the runs of the binary on 2
/// cores, and in none of 5 with a group each.
fn own_group(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0)
}

fn bash(dir: &Path, path: &str, script: &str) {
    let o = own_group(&mut Command::new("bash"))
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .envs(OPEN_MPI_AS_ROOT)
        .output()
        .unwrap();
    // The status and both streams: a launcher may report a failed process
    // on stdout only (MPICH's "BAD TERMINATION").
    assert!(
        o.status.success(),
        "{script}\n{}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Ranks in the tests of the real launchers: 3 Slurm array tasks in blocks
/// of 3, 2 files per MPI process.
const RANKS: i64 = 8;

/// The events dataset `dir` completed: `_SUCCESS` in every rank's folder.
fn assert_complete(dir: &Path, ranks: i64) {
    for r in 0..ranks {
        let marker = dir.join(format!("rank={r}/_SUCCESS"));
        assert!(marker.is_file(), "{} missing", marker.display());
    }
}

/// The events of one run over `inputs`, written to `out`.
fn one_export(inputs: &[PathBuf], out: &Path) {
    let o = Command::new(env!("CARGO_BIN_EXE_tracestat"))
        .args(inputs)
        .arg("--events")
        .arg(out)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

const SAME_ROWS: &str = r#"
import json, sys
import duckdb
con = duckdb.connect()
def rel(d):
    return f"SELECT * FROM read_parquet('{d}/*/*.parquet', hive_partitioning = true)"
a, b = sys.argv[1], sys.argv[2]
count = lambda q: con.execute(f"SELECT count(*) FROM ({q})").fetchone()[0]
json.dump({
    "rows": [count(rel(a)), count(rel(b))],
    "only_in_first": count(f"{rel(a)} EXCEPT ALL {rel(b)}"),
    "only_in_second": count(f"{rel(b)} EXCEPT ALL {rel(a)}"),
    "ranks": con.execute(f"SELECT count(DISTINCT rank) FROM ({rel(a)})").fetchone()[0],
}, sys.stdout)
"#;

/// The two events datasets hold the same rows (as multisets, every column
/// and the rank), read back with DuckDB.
fn assert_same_rows(got: &Path, one_run: &Path, ranks: i64) {
    let v = python_json(SAME_ROWS, &[got.as_os_str(), one_run.as_os_str()]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows[0], rows[1], "{v}");
    // 3 steps of 3 device commands and 4 host calls per rank, at least.
    assert!(rows[0].as_i64().unwrap() >= ranks * 21, "{v}");
    assert_eq!(v["only_in_first"], 0, "{v}");
    assert_eq!(v["only_in_second"], 0, "{v}");
    assert_eq!(v["ranks"], ranks, "{v}");
}

// ---- Slurm ----

/// The one-node cluster of scripts/test-services.sh, started if it is not
/// running (idempotent; several tests call it at once, the script locks).
struct Slurm {
    conf: PathBuf,
}

impl Slurm {
    /// None (after a loud message; a failure under CI) when Slurm cannot
    /// run here.
    fn start() -> Option<Slurm> {
        let services = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/test-services.sh");
        let o = Command::new("bash")
            .arg(&services)
            .arg("start")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&o.stderr);
        if !o.status.success() {
            unavailable(&format!("Slurm could not start: {}", said.trim()));
            return None;
        }
        let conf = said
            .split("SLURM_CONF=")
            .nth(1)
            .and_then(|s| s.split(')').next())
            .unwrap_or_else(|| panic!("no SLURM_CONF in {said:?}"));
        Some(Slurm {
            conf: PathBuf::from(conf),
        })
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf);
        c
    }

    fn stdout(&self, program: &str, args: &[&str]) -> String {
        let o = self.command(program).args(args).output().unwrap();
        assert!(
            o.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// `JOB STATE` of the jobs (array tasks as `ID_TASK`), finished ones
    /// included.
    fn states(&self, jobs: &[&str]) -> std::collections::BTreeMap<String, String> {
        self.stdout(
            "squeue",
            &["-h", "--states=all", "-j", &jobs.join(","), "-o", "%i %T"],
        )
        .lines()
        .map(|l| {
            let (id, state) = l.split_once(' ').unwrap();
            (id.to_string(), state.to_string())
        })
        .collect()
    }

    /// Waits until `squeue` lists none of `jobs` as pending or running
    /// (minutes at most: a bound that only turns a hang into a failure),
    /// then returns their end states.
    fn wait(&self, jobs: &[&str]) -> std::collections::BTreeMap<String, String> {
        let start = std::time::Instant::now();
        while !self
            .stdout("squeue", &["-h", "-j", &jobs.join(","), "-o", "%i"])
            .trim()
            .is_empty()
        {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(600),
                "jobs {jobs:?} still queued: {:?}",
                self.states(jobs)
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        self.states(jobs)
    }

    /// Waits until array task `task` runs.
    fn wait_running(&self, task: &str) {
        let start = std::time::Instant::now();
        while self
            .stdout("squeue", &["-h", "-j", task, "-o", "%T"])
            .trim()
            != "RUNNING"
        {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(600),
                "{task} never ran: {:?}",
                self.states(&[task])
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// The job id in `(ID)` of the script's "submitted ..." line.
fn submitted_id(stderr: &str) -> String {
    let at = stderr.find(" (").unwrap_or_else(|| panic!("{stderr}")) + 2;
    stderr[at..at + stderr[at..].find(')').unwrap()].to_string()
}

/// The logs the jobs wrote into `work`, for a failure's message.
fn logs(work: &Path) -> String {
    let mut out = String::new();
    for e in std::fs::read_dir(work).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|e| e == "log") {
            out += &format!(
                "== {}\n{}",
                p.display(),
                std::fs::read_to_string(&p).unwrap()
            );
        }
    }
    out
}

#[test]
fn slurm_array_and_combine_jobs_give_the_report_of_one_run() {
    let Some(slurm) = Slurm::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let files = ranks::write_ranks(&dir.path().join("run"), RANKS);
    let opts = ["--tree=2", "--short-kernel", "20us"];
    let o = slurm
        .command("bash")
        .arg(script())
        .args(["--block", "3"])
        .arg(&work)
        .args(&files)
        .arg("--")
        .args(opts)
        .env("TRACESTAT", env!("CARGO_BIN_EXE_tracestat"))
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("submitted 3 tasks ("), "{stderr}");
    let array = submitted_id(&stderr);
    let combine = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let states = slurm.wait(&[&array, &combine]);
    let expected: std::collections::BTreeMap<String, String> = [
        format!("{array}_0"),
        format!("{array}_1"),
        format!("{array}_2"),
        combine.clone(),
    ]
    .into_iter()
    .map(|id| (id, "COMPLETED".to_string()))
    .collect();
    assert_eq!(states, expected, "{}", logs(&work));
    for t in 0..3 {
        assert!(work.join(format!("part.{t}.json")).is_file());
    }
    let whole = one_run(dir.path(), &files, &opts, &dir.path().join("whole.json"));
    assert_eq!(read_json(&work.join("report.json")), whole);
    // The straggler of the traces is the report's.
    let stragglers = whole["stragglers"].as_array().unwrap();
    assert_eq!(stragglers.len(), RANKS as usize);
    assert!(work.join("csv/breakdown.csv").is_file());
    let page = std::fs::read_to_string(work.join("report.html")).unwrap();
    assert!(
        page.contains(&format!("<p>Straggler: rank {}", ranks::STRAGGLER)),
        "{}",
        &page[..page.len().min(2000)]
    );
}

#[test]
fn slurm_events_export_resubmitted_after_a_cancelled_task_gives_the_rows_of_one_run() {
    let Some(slurm) = Slurm::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (work, ev) = (dir.path().join("work"), dir.path().join("ev"));
    let files = ranks::write_ranks(&dir.path().join("run"), RANKS);
    // Rank 4 (array task 1: ranks 3, 4, 5) is a FIFO that nothing writes:
    // its task runs, blocked reading it, until it is cancelled.
    let stuck = &files[4];
    std::fs::remove_file(stuck).unwrap();
    let made = Command::new("mkfifo").arg(stuck).status().unwrap();
    assert!(made.success());
    let submit = || {
        let o = slurm
            .command("bash")
            .arg(script())
            .args(["--block", "3", "--events"])
            .arg(&ev)
            .arg(&work)
            .args(&files)
            .env("TRACESTAT", env!("CARGO_BIN_EXE_tracestat"))
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{stderr}");
        assert!(stderr.contains("submitted 3 export tasks ("), "{stderr}");
        submitted_id(&stderr)
    };
    let first = submit();
    let task1 = format!("{first}_1");
    slurm.wait_running(&task1);
    slurm.stdout("scancel", &[&task1]);
    let states = slurm.wait(&[&first]);
    let state = |t: u32| states.get(&format!("{first}_{t}")).map(String::as_str);
    assert_eq!(state(0), Some("COMPLETED"), "{states:?}\n{}", logs(&work));
    assert_eq!(state(1), Some("CANCELLED"), "{states:?}\n{}", logs(&work));
    assert_eq!(state(2), Some("COMPLETED"), "{states:?}\n{}", logs(&work));
    for r in [0, 1, 2, 6, 7] {
        assert!(ev.join(format!("rank={r}/_SUCCESS")).is_file(), "rank {r}");
    }
    // The cancelled rank has no marker and no part under a final name.
    let rank4 = ev.join("rank=4");
    assert!(!rank4.join("_SUCCESS").exists());
    if rank4.is_dir() {
        for e in std::fs::read_dir(&rank4).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!name.starts_with("part-"), "{name}");
        }
    }

    // The trace is there now: the same command again completes the dataset
    // and redoes only the ranks without a marker.
    std::fs::remove_file(stuck).unwrap();
    std::fs::write(stuck, ranks::rank_trace(4)).unwrap();
    let second = submit();
    let states = slurm.wait(&[&second]);
    assert!(
        states.len() == 3 && states.values().all(|s| s == "COMPLETED"),
        "{states:?}\n{}",
        logs(&work)
    );
    let log = |t: u32| std::fs::read_to_string(work.join(format!("part.{t}.log"))).unwrap();
    assert!(log(0).contains("3 ranks already complete"), "{}", log(0));
    assert!(log(2).contains("2 ranks already complete"), "{}", log(2));
    assert!(!log(1).contains("3 ranks already complete"), "{}", log(1));
    assert_complete(&ev, RANKS);
    let whole = dir.path().join("whole");
    one_export(&files, &whole);
    assert_same_rows(&ev, &whole, RANKS);
}

// ---- MPI ----

/// Whether a working `mpiexec` is here; when not, a loud skip (a failure
/// under CI).
fn mpiexec_works() -> bool {
    let o = own_group(&mut Command::new("mpiexec"))
        .args(["-n", "2", "true"])
        .envs(OPEN_MPI_AS_ROOT)
        .output();
    match o {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            unavailable(&format!(
                "mpiexec -n 2 true failed ({}): {}",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            false
        }
        Err(e) => {
            unavailable(&format!(
                "no mpiexec ({e}): apt-get install mpich (scripts/test.sh does it)"
            ));
            false
        }
    }
}

/// A recipe of the page for 16 processes, for `n`.
fn with_processes(block: &str, n: u32) -> String {
    assert!(block.contains("mpiexec -n 16 "), "{block}");
    assert!(block.contains("NR % 16 == r"), "{block}");
    block
        .replace("mpiexec -n 16 ", &format!("mpiexec -n {n} "))
        .replace("NR % 16 == r", &format!("NR % {n} == r"))
}

/// 8 ranks over 4 processes (2 files each), and 3 ranks (one process has
/// no file: an empty partial, or no run for the events).
const MPI_CASES: [i64; 2] = [RANKS, 3];

#[test]
fn mpiexec_recipe_of_the_docs_gives_the_report_of_one_run() {
    if !mpiexec_works() {
        return;
    }
    let block = with_processes(&doc_block("mpiexec (one partial per MPI process"), 4);
    for n in MPI_CASES {
        let (dir, path) = workspace();
        ranks::write_ranks(&dir.path().join("run"), n);
        bash(dir.path(), &path, &block);
        // One partial per process, empty or not.
        let mut parts: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("part.") && n.ends_with(".json"))
            .collect();
        parts.sort();
        assert_eq!(
            parts,
            ["part.0.json", "part.1.json", "part.2.json", "part.3.json"],
            "{n} ranks"
        );
        let whole = one_run(
            dir.path(),
            &run_files(dir.path()),
            &[],
            &dir.path().join("whole.json"),
        );
        assert_eq!(
            read_json(&dir.path().join("report.json")),
            whole,
            "{n} ranks"
        );
        assert_eq!(whole["stragglers"].as_array().unwrap().len(), n as usize);
        assert!(dir.path().join("report.html").is_file());
    }
}

#[test]
fn mpiexec_events_recipe_of_the_docs_gives_the_rows_of_one_run() {
    if !mpiexec_works() {
        return;
    }
    let block = doc_block("mpiexec (a process whose share of files is empty");
    assert!(block.contains("/lus/proj/events"), "{block}");
    let block = with_processes(&block, 4).replace("/lus/proj/events", "events");
    for n in MPI_CASES {
        let (dir, path) = workspace();
        ranks::write_ranks(&dir.path().join("run"), n);
        bash(dir.path(), &path, &block);
        let ev = dir.path().join("events");
        assert_complete(&ev, n);
        let whole = dir.path().join("whole");
        let files: Vec<PathBuf> = run_files(dir.path())
            .iter()
            .map(|f| dir.path().join(f))
            .collect();
        one_export(&files, &whole);
        assert_same_rows(&ev, &whole, n);
    }
}

#[test]
fn gnu_parallel_recipe_of_the_docs_gives_the_tables_of_one_run() {
    let (dir, path) = workspace();
    for f in gen_files() {
        std::fs::copy(&f, dir.path().join("run").join(f.file_name().unwrap())).unwrap();
    }
    let block = doc_block("GNU parallel (blocks of 64 files");
    assert!(block.contains("parallel -N 64 -j 8 "), "{block}");
    // Blocks of 2 files instead of 64, so that 3 files make 2 partials.
    let block = block.replace("-N 64", "-N 2");
    // Without a tty GNU parallel asks for nothing; --will-cite keeps its
    // citation notice out of stderr.
    let block = block.replace("parallel ", "parallel --will-cite ");
    bash(dir.path(), &path, &block);
    for n in 1..=2 {
        assert!(dir.path().join(format!("part.{n}.json")).is_file(), "{n}");
    }
    let csv = dir.path().join("whole");
    let o = Command::new(env!("CARGO_BIN_EXE_tracestat"))
        .current_dir(dir.path())
        .args(run_files(dir.path()))
        .arg("--csv")
        .arg(&csv)
        .arg("-q")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut names: Vec<String> = std::fs::read_dir(&csv)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 13, "{names:?}");
    for name in names {
        assert_eq!(
            std::fs::read_to_string(dir.path().join("tables").join(&name)).unwrap(),
            std::fs::read_to_string(csv.join(&name)).unwrap(),
            "{name}"
        );
    }
}
