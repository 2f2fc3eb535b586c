//! Traces padded with megabytes of blanks (after the event array's `[` and
//! between two events), so that events straddle many buffer refills: the
//! report and the events dataset are those of the unpadded files.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::gen_files;

/// The generated traces, each padded past 1 MiB with blanks after the
/// event array's `[` and between two events in its middle.
fn padded_traces(dir: &Path) -> Vec<PathBuf> {
    gen_files()
        .iter()
        .map(|p| {
            let t = std::fs::read(p).unwrap();
            let open = t.iter().position(|&c| c == b'[').unwrap() + 1;
            let mid = open
                + t[t.len() / 2..]
                    .windows(2)
                    .position(|w| w == b",\n")
                    .unwrap()
                + t.len() / 2
                - open
                + 1;
            let mut out = t[..open].to_vec();
            out.extend(std::iter::repeat_n(b' ', 700 << 10));
            out.extend_from_slice(&t[open..mid]);
            out.extend(std::iter::repeat_n(b'\n', 500 << 10));
            out.extend_from_slice(&t[mid..]);
            assert!(out.len() > 1 << 20);
            let to = dir.join(p.file_name().unwrap());
            std::fs::write(&to, out).unwrap();
            to
        })
        .collect()
}

fn tracestat(inputs: &[PathBuf], args: &[&str]) -> std::process::Output {
    let o = Command::new(env!("CARGO_BIN_EXE_tracestat"))
        .args(inputs)
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// Every file under `dir`, relative path -> bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push((
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn padded_traces_give_the_report_and_dataset_of_the_unpadded_ones() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = padded_traces(dir.path());
    let json = dir.path().join("padded.json");
    tracestat(&inputs, &["--json", json.to_str().unwrap()]);
    let events = dir.path().join("events-padded");
    let plain_events = dir.path().join("events-plain");
    tracestat(&inputs, &["-q", "--events", events.to_str().unwrap()]);
    tracestat(
        &gen_files(),
        &["-q", "--events", plain_events.to_str().unwrap()],
    );
    let (padded, plain) = (tree(&events), tree(&plain_events));
    assert!(!padded.is_empty());
    assert_eq!(padded.len(), plain.len());
    for ((pa, a), (pb, b)) in padded.iter().zip(&plain) {
        assert_eq!(pa, pb);
        if pa.file_name().is_some_and(|n| n == "_SUCCESS") {
            continue; // names the input and its size
        }
        assert!(a == b, "{} differs", pa.display());
    }
    // The padding changes no number: the unpadded files give the same
    // tables (the document names no file sizes).
    // The documents name the files: compare with the folders taken out.
    let unnamed = |text: &str, folder: &Path| -> serde_json::Value {
        let folder = folder.to_str().unwrap();
        serde_json::from_str(&text.replace(folder, "DIR")).unwrap()
    };
    let doc = unnamed(&std::fs::read_to_string(&json).unwrap(), dir.path());
    let (plain, _, _) = crate::common::report(&gen_files(), &[]);
    let plain = unnamed(&plain.to_string(), gen_files()[0].parent().unwrap());
    assert!(doc["kernels"].as_array().is_some_and(|k| !k.is_empty()));
    for (key, value) in doc.as_object().unwrap() {
        if key != "tool" && key != "options" {
            assert_eq!(value, &plain[key], "{key}");
        }
    }
}
