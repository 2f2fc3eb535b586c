//! Past one machine (docs/tracestat.md#past-one-machine): the Slurm script
//! in its report mode, and the mpiexec and GNU parallel recipes exactly as
//! the page writes them, each give the report of one run over all files.
//!
//! The recipes are read from docs/tracestat.md and run by bash. GNU
//! parallel is the real one (Debian package `parallel`, installed by
//! scripts/test.sh; without it the test fails). mpiexec is a stand-in that
//! runs the command once per MPI rank with `PMI_RANK` set, one after the
//! other, which is what the recipe relies on.

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

/// The fenced `sh` block that follows the line starting with `intro` in
/// docs/tracestat.md.
fn doc_block(intro: &str) -> String {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/tracestat.md"))
            .unwrap();
    let at = page
        .lines()
        .position(|l| l.starts_with(intro))
        .unwrap_or_else(|| panic!("docs/tracestat.md: no line starting with {intro:?}"));
    let block: Vec<&str> = page
        .lines()
        .skip(at + 1)
        .skip_while(|l| l.trim().is_empty())
        .collect();
    assert_eq!(block[0], "```sh", "{intro}: not followed by a sh block");
    block[1..]
        .iter()
        .take_while(|l| !l.starts_with("```"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A folder with `run/` holding copies of `traces`, and a `bin/` with
/// `tracestat` (the binary under test) for PATH.
fn workspace(traces: Vec<PathBuf>) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    for f in traces {
        std::fs::copy(&f, run.join(f.file_name().unwrap())).unwrap();
    }
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

fn bash(dir: &Path, path: &str, script: &str) {
    let o = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{script}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn mpiexec_recipe_of_the_docs_gives_the_report_of_one_run() {
    let (dir, path) = workspace(coll_files());
    let block = doc_block("mpiexec (one partial per MPI process");
    assert!(block.contains("mpiexec -n 16 "), "{block}");
    // Stand-in launcher: `mpiexec -n N CMD...` runs CMD for ranks 0..N-1.
    let fake = dir.path().join("bin/mpiexec");
    std::fs::write(
        &fake,
        "#!/bin/sh\n[ \"$1\" = -n ] || exit 2\nn=$2; shift 2\ni=0\nwhile [ $i -lt $n ]; do PMI_RANK=$i \"$@\" || exit $?; i=$((i + 1)); done\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    bash(dir.path(), &path, &block);
    // 16 processes over 4 files: 12 of them made an empty partial.
    let parts = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            let n = e.as_ref().unwrap().file_name();
            let n = n.to_string_lossy();
            n.starts_with("part.") && n.ends_with(".json")
        })
        .count();
    assert_eq!(parts, 16);
    let whole = one_run(
        dir.path(),
        &run_files(dir.path()),
        &[],
        &dir.path().join("whole.json"),
    );
    assert_eq!(read_json(&dir.path().join("report.json")), whole);
    assert!(dir.path().join("report.html").is_file());
}

#[test]
fn gnu_parallel_recipe_of_the_docs_gives_the_tables_of_one_run() {
    let (dir, path) = workspace(gen_files());
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
