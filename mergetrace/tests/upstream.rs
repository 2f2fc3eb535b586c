//! Side by side with the NEWEST mergetrace.py (the `--result-dir` version,
//! docs/compatibility.md#mergetrace-upstream-newest): its outputs on a
//! result-dir tree of JSON traces and one of `.pftrace` traces are the
//! `*.orig.*` files of `testdata/trace/upstream/` (how they were made: its
//! README). Every difference checked here is a documented one.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use unitrace_core::pftrace::{PacketData, PacketReader};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/trace")
        .join(rel)
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            fs::copy(e.path(), dest).unwrap();
        }
    }
}

fn mergetrace(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mergetrace"))
        .current_dir(cwd)
        .args(args)
        .output()
        .unwrap()
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// Every record of a `.pftrace`: its raw bytes and its flow ids.
fn records(bytes: &[u8]) -> Vec<(Vec<u8>, Vec<u64>)> {
    let mut reader = PacketReader::new(bytes);
    let mut out = Vec::new();
    while let Some(rec) = reader.next_record().unwrap() {
        let flows = match rec.decode().unwrap().data {
            PacketData::TrackEvent(e) => e.flow_ids().collect(),
            _ => Vec::new(),
        };
        out.push((rec.raw.to_vec(), flows));
    }
    assert!(reader.summary().truncation.is_none());
    out
}

/// The packets of each rank's trace of the `.pftrace` tree.
fn rank_records(tree: &Path, rank: u32) -> Vec<(Vec<u8>, Vec<u64>)> {
    let folder = fs::read_dir(tree)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("rank_{rank}.python."))
        })
        .unwrap();
    records(&fs::read(folder.join("chrome_trace.pftrace")).unwrap())
}

/// JSON tree: the same events in the same order as the original's
/// `--ranks 0 1 2` (ours lists in rank order without `--ranks`; the
/// original in the file system's order), its success line, inputs left
/// alone.
#[test]
fn result_dir_json_matches_the_newest_original() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&data("upstream/resdir_json"), &dir.path().join("res"));
    for args in [
        &["--result-dir", "res", "-o", "resdir_json.orig.json"][..],
        &[
            "--result-dir",
            "res",
            "--ranks",
            "0",
            "1",
            "2",
            "-o",
            "resdir_json.orig.json",
        ][..],
    ] {
        let o = mergetrace(dir.path(), args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            String::from_utf8(o.stdout).unwrap(),
            fs::read_to_string(data("upstream/resdir_json.orig.stdout")).unwrap()
        );
        assert!(o.stderr.is_empty());
        assert_eq!(
            json(&fs::read(dir.path().join("resdir_json.orig.json")).unwrap()),
            json(&fs::read(data("upstream/resdir_json.orig.json")).unwrap())
        );
    }
}

/// `.pftrace` tree: the original concatenates the files; we write the same
/// packets in the same order, byte for byte, except the flow ids of every
/// rank after the first, which get the input's position in bits 32+ so the
/// ranks' flows stay apart (docs/compatibility.md#mergetrace-pftrace).
/// Both print nothing.
#[test]
fn result_dir_pftrace_against_the_newest_original() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("pf");
    copy_tree(&data("pftrace/resultdir"), &tree);
    let o = mergetrace(dir.path(), &["--result-dir", "pf", "-o", "ours.pftrace"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    let orig = records(&fs::read(data("upstream/resdir_pftrace.orig.pftrace")).unwrap());
    let ours = records(&fs::read(dir.path().join("ours.pftrace")).unwrap());
    // The original's output is ranks 0, 1, 2 concatenated.
    let per_rank: Vec<usize> = (0..3).map(|r| rank_records(&tree, r).len()).collect();
    assert_eq!(orig.len(), per_rank.iter().sum::<usize>());
    assert_eq!(ours.len(), orig.len());
    let mut input = 0u64;
    let mut left = per_rank[0];
    let mut renamed = 0;
    for ((our_raw, our_flows), (orig_raw, orig_flows)) in ours.iter().zip(&orig) {
        while left == 0 {
            input += 1;
            left = per_rank[input as usize];
        }
        left -= 1;
        if orig_flows.is_empty() || input == 0 {
            assert_eq!(our_raw, orig_raw);
        } else {
            let expected: Vec<u64> = orig_flows.iter().map(|f| (input << 32) | f).collect();
            assert_eq!(our_flows, &expected);
            assert_eq!(our_raw.len(), orig_raw.len());
            renamed += 1;
        }
    }
    assert!(renamed > 0);
}

/// `--ranks 2 0` keeps the given order in both; without `-o` the original
/// writes protobuf into `unitrace.all.json`, we into `unitrace.all.pftrace`.
#[test]
fn result_dir_ranks_order_and_default_name_against_the_newest_original() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("pf");
    copy_tree(&data("pftrace/resultdir"), &tree);
    let o = mergetrace(dir.path(), &["--result-dir", "pf", "--ranks", "2", "0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!dir.path().join("unitrace.all.json").exists());
    let ours = fs::read(dir.path().join("unitrace.all.pftrace")).unwrap();
    let orig = fs::read(data("upstream/default_name_ranks_2_0.orig.json")).unwrap();
    let rank2 = rank_records(&tree, 2);
    let rank0 = rank_records(&tree, 0);
    let concat: Vec<u8> = rank2
        .iter()
        .chain(&rank0)
        .flat_map(|r| r.0.clone())
        .collect();
    assert_eq!(orig, concat);
    assert_eq!(records(&ours).len(), rank2.len() + rank0.len());
    // The first input is written as it is.
    let first: Vec<u8> = rank2.iter().flat_map(|r| r.0.clone()).collect();
    assert!(ours.starts_with(&first));
}
