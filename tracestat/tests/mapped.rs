//! Trace files of 1 MiB or more are read in place from a mapping
//! (docs/benchmarks.md#the-json-trace-scanner): the report and the events
//! dataset must be those of streaming the same files (`UNITRACE_NO_MMAP`).

use std::path::{Path, PathBuf};
use std::process::Command;

use unitrace_core::trace::NO_MAP_VARIABLE;

use crate::common::gen_files;

/// The generated traces, each padded past 1 MiB with blanks after the
/// event array's `[` and between two events in its middle (so that the
/// mapped window grows across events).
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

fn tracestat(inputs: &[PathBuf], args: &[&str], stream: bool) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tracestat"));
    cmd.args(inputs).args(args);
    if stream {
        cmd.env(NO_MAP_VARIABLE, "1");
    } else {
        cmd.env_remove(NO_MAP_VARIABLE);
    }
    let o = cmd.output().unwrap();
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
fn mapped_traces_give_the_streamed_report_and_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = padded_traces(dir.path());
    let mut docs = Vec::new();
    let mut datasets = Vec::new();
    for stream in [false, true] {
        let tag = if stream { "streamed" } else { "mapped" };
        let json = dir.path().join(format!("{tag}.json"));
        let events = dir.path().join(format!("events-{tag}"));
        let o = tracestat(&inputs, &["--json", json.to_str().unwrap()], stream);
        docs.push((std::fs::read(&json).unwrap(), o.stdout));
        tracestat(
            &inputs,
            &["-q", "--events", events.to_str().unwrap()],
            stream,
        );
        datasets.push(tree(&events));
    }
    assert!(docs[0].0 == docs[1].0, "--json documents differ");
    assert_eq!(
        String::from_utf8_lossy(&docs[0].1),
        String::from_utf8_lossy(&docs[1].1),
        "console reports differ"
    );
    assert!(!datasets[0].is_empty());
    assert_eq!(datasets[0].len(), datasets[1].len());
    for ((pa, a), (pb, b)) in datasets[0].iter().zip(&datasets[1]) {
        assert_eq!(pa, pb);
        assert!(a == b, "{} differs", pa.display());
    }
    // The padding changes no number: the unpadded files give the same
    // tables (the document names no file sizes).
    // The documents name the files: compare with the folders taken out.
    let unnamed = |text: &str, folder: &Path| -> serde_json::Value {
        let folder = folder.to_str().unwrap();
        serde_json::from_str(&text.replace(folder, "DIR")).unwrap()
    };
    let doc = unnamed(std::str::from_utf8(&docs[0].0).unwrap(), dir.path());
    let (plain, _, _) = crate::common::report(&gen_files(), &[]);
    let plain = unnamed(&plain.to_string(), gen_files()[0].parent().unwrap());
    assert!(doc["kernels"].as_array().is_some_and(|k| !k.is_empty()));
    for (key, value) in doc.as_object().unwrap() {
        if key != "tool" && key != "options" {
            assert_eq!(value, &plain[key], "{key}");
        }
    }
}
