//! Same seed and options, same bytes (docs/unitrace-gen.md#determinism):
//! for every subcommand, whatever the number of threads writing the ranks.

use std::path::Path;
use std::process::Command;

use crate::common::{gen, s, tree};

/// Every subcommand into `dir` with `seed`.
fn write_everything(dir: &Path, seed: &str, threads: Option<&str>) {
    let run = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_unitrace-gen"));
        cmd.args(["--seed", seed]).args(args);
        if let Some(n) = threads {
            cmd.env("RAYON_NUM_THREADS", n);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    run(&[
        "trace",
        &p("t"),
        "--ranks",
        "5",
        "--events",
        "3000",
        "--steps",
        "3",
        "--format",
        "both",
        "--metrics-link",
        "http",
        "--cut",
        "1:event,3",
        "-q",
    ]);
    run(&[
        "trace",
        &p("rd"),
        "--ranks",
        "3",
        "--events",
        "500",
        "--layout",
        "result-dir",
        "--clock-offset-us",
        "2000",
        "-q",
    ]);
    run(&[
        "metrics",
        &p("m.csv"),
        "--devices",
        "2",
        "--idle-sampling",
        "-q",
    ]);
    run(&["metrics", &p("q.csv"), "--validity-columns", "-q"]);
    run(&["stalls", &p("s.csv"), "--dump", &p("dump"), "-q"]);
    run(&["summaries", &p("r.tgz"), "--ranks", "3", "--timeline", "-q"]);
    run(&[
        "roofline",
        "--compute",
        &p("c.txt"),
        "--memory",
        &p("mem.txt"),
        "--format",
        "old",
        "-q",
    ]);
}

#[test]
fn the_same_seed_writes_the_same_bytes() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write_everything(a.path(), "7", None);
    write_everything(b.path(), "7", Some("1"));
    let (ta, tb) = (tree(a.path()), tree(b.path()));
    assert!(ta.len() > 20, "{} files", ta.len());
    assert_eq!(ta.len(), tb.len());
    for ((pa, ba), (pb, bb)) in ta.iter().zip(&tb) {
        assert_eq!(pa, pb);
        assert!(ba == bb, "{} differs between two runs", pa.display());
    }
}

#[test]
fn another_seed_writes_other_bytes() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for (dir, seed) in [(a.path(), "1"), (b.path(), "2")] {
        gen(&[
            "--seed",
            seed,
            "trace",
            s(&dir.join("t")),
            "--ranks",
            "2",
            "--events",
            "400",
            "-q",
        ]);
        gen(&["metrics", s(&dir.join("m.csv")), "--seed", seed, "-q"]);
    }
    let (ta, tb) = (tree(a.path()), tree(b.path()));
    for ((pa, ba), (_, bb)) in ta.iter().zip(&tb) {
        assert!(ba != bb, "{} is the same for seeds 1 and 2", pa.display());
    }
}
