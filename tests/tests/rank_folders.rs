//! A `rank_<r>.` folder of a `unitrace --result-dir` tree decides the rank
//! of the traces under it in every tool, over the `RANK n` the trace's
//! process names say (docs/formats.md#timeline-ranks): a trace whose
//! process names say `RANK 0`, under `rank_7.python.5/`, is rank 7 to
//! tracestat (report, `--ranks 7`, `--events`), mergetrace (`--ranks 7`,
//! `--stats`) and compare (uniview routes by the same folders:
//! `analyze/tests/uniview.rs`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use unitrace_system_tests::{output_within, tool_binary};

fn run(tool: &str, args: &[&Path]) -> Output {
    let mut cmd = Command::new(tool_binary(tool));
    cmd.args(args);
    let o = output_within(&mut cmd, Duration::from_secs(60)).unwrap();
    assert!(
        o.status.success(),
        "{tool} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A result-dir tree with one trace of RANK 0 moved under `rank_7.python.5`.
fn tree(dir: &Path) -> PathBuf {
    let root = dir.join("run");
    let o = Command::new(tool_binary("unitrace-gen"))
        .args(["--seed", "4", "trace"])
        .arg(&root)
        .args([
            "--ranks",
            "1",
            "--events",
            "300",
            "--layout",
            "result-dir",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let folder = fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("chrome_trace.json").is_file())
        .unwrap();
    let trace = fs::read_to_string(folder.join("chrome_trace.json")).unwrap();
    assert!(trace.contains("\"RANK 0 HOST"), "the trace names RANK 0");
    fs::rename(&folder, root.join("rank_7.python.5")).unwrap();
    root
}

#[test]
fn a_rank_folder_decides_the_rank_in_every_tool() {
    let dir = tempfile::tempdir().unwrap();
    let root = tree(dir.path());
    let p = |s: &str| PathBuf::from(s);
    let text = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();

    // tracestat: the report's rank, and --ranks 7 selects it.
    let json = dir.path().join("r.json");
    run(
        "tracestat",
        &[&p("--ranks"), &p("7"), &root, &p("--json"), &json],
    );
    let report = fs::read_to_string(&json).unwrap();
    assert!(report.contains("\"rank\": \"7\""), "{report}");
    assert!(!report.contains("\"rank\": \"0\""), "{report}");
    let o = Command::new(tool_binary("tracestat"))
        .args(["--ranks", "0"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the inputs hold rank(s) 7"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // tracestat --events: the partition.
    let ev = dir.path().join("ev");
    run(
        "tracestat",
        &[&p("--events"), &ev, &p("--ranks"), &p("7"), &root],
    );
    assert!(ev.join("rank=7/_SUCCESS").is_file());
    assert!(!ev.join("rank=0").exists());
    // mergetrace: --ranks 7 selects it, --stats names it.
    let merged = dir.path().join("m.json");
    let o = run(
        "mergetrace",
        &[
            &p("--result-dir"),
            &root,
            &p("--ranks"),
            &p("7"),
            &p("-o"),
            &merged,
            &p("--stats"),
        ],
    );
    assert!(merged.is_file());
    let stats = text(&o);
    let row = stats
        .lines()
        .find(|l| l.trim_start().starts_with('7') && l.contains("chrome_trace.json"))
        .unwrap_or_else(|| panic!("no rank 7 row: {stats}"));
    assert!(!row.is_empty());
    // compare: the per-rank rows name rank 7.
    let cj = dir.path().join("c.json");
    run("compare", &[&root, &root, &p("--json"), &cj]);
    let c = fs::read_to_string(&cj).unwrap();
    assert!(c.contains("rank 7 compute"), "{c}");
    assert!(!c.contains("rank 0 "), "{c}");
}
