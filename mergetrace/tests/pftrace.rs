//! `mergetrace` on Perfetto protobuf timelines (`.pftrace`) and on
//! `--result-dir` trees: the merged output decoded with core's reader
//! (packet counts, input order, flow ids and track uuids kept apart per
//! input), the options, and the result-dir discovery of the newest
//! mergetrace.py (messages, exit codes, rank order).

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use unitrace_core::pftrace::{EventType, PacketData, PacketReader};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/trace/pftrace")
        .join(rel)
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(data(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

fn copy_to(dir: &Path, files: &[PathBuf]) -> Vec<PathBuf> {
    files
        .iter()
        .map(|f| {
            let to = dir.join(f.file_name().unwrap());
            fs::copy(f, &to).unwrap();
            to
        })
        .collect()
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

fn mergetrace(cwd: &Path, args: &[&str], inputs: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mergetrace"))
        .current_dir(cwd)
        .args(args)
        .args(inputs)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a test looks at in one packet.
#[derive(Debug, Clone, PartialEq)]
struct Pkt {
    timestamp: Option<u64>,
    kind: &'static str,
    event: Option<EventType>,
    name: Option<String>,
    track: Option<u64>,
    parent: Option<u64>,
    flows: Vec<u64>,
    pid: Option<i32>,
    tid: Option<i64>,
}

fn packets(path: &Path) -> Vec<Pkt> {
    let bytes = fs::read(path).unwrap();
    let mut r = PacketReader::new(&bytes[..]);
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        let p = rec.decode().unwrap();
        let mut k = Pkt {
            timestamp: p.timestamp,
            kind: "other",
            event: None,
            name: None,
            track: None,
            parent: None,
            flows: Vec::new(),
            pid: None,
            tid: None,
        };
        match p.data {
            PacketData::TrackEvent(e) => {
                k.kind = "event";
                k.event = Some(e.kind);
                k.name = e.name_str().map(|n| n.into_owned());
                k.track = e.track_uuid;
                k.flows = e.flow_ids().collect();
            }
            PacketData::TrackDescriptor(d) => {
                k.kind = "track";
                k.name = d.display_name().map(|n| n.into_owned());
                k.track = d.uuid;
                k.parent = d.parent_uuid;
                k.pid = d
                    .process
                    .and_then(|p| p.pid)
                    .or(d.thread.and_then(|t| t.pid));
                k.tid = d.thread.and_then(|t| t.tid);
            }
            PacketData::ClockSnapshot(_) => k.kind = "clock",
            PacketData::Other => {}
        }
        out.push(k);
    }
    assert!(r.summary().truncation.is_none(), "{}", path.display());
    out
}

/// Splits the merged packets into the inputs' shares (input order).
fn split<'a>(merged: &'a [Pkt], inputs: &[Vec<Pkt>]) -> Vec<&'a [Pkt]> {
    let mut at = 0;
    inputs
        .iter()
        .map(|i| {
            let s = &merged[at..at + i.len()];
            at += i.len();
            s
        })
        .collect()
}

fn flow_set(pkts: &[Pkt]) -> HashSet<u64> {
    pkts.iter().flat_map(|p| p.flows.iter().copied()).collect()
}

fn uuid_set(pkts: &[Pkt]) -> HashSet<u64> {
    pkts.iter()
        .filter(|p| p.kind == "track")
        .filter_map(|p| p.track)
        .collect()
}

/// Every event's track and every thread's parent is described before use.
fn assert_tracks_described(pkts: &[Pkt]) {
    let mut described = HashSet::new();
    for p in pkts {
        match p.kind {
            "track" => {
                if let Some(parent) = p.parent {
                    assert!(described.contains(&parent), "parent {parent:x} undescribed");
                }
                described.insert(p.track.unwrap());
            }
            "event" => assert!(
                described.contains(&p.track.unwrap()),
                "event on undescribed track {:x}",
                p.track.unwrap()
            ),
            _ => {}
        }
    }
}

#[test]
fn merge_keeps_every_packet_in_order_and_the_ranks_apart() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &files("legacy", "pftrace"));
    let before: Vec<Vec<u8>> = inputs.iter().map(|p| fs::read(p).unwrap()).collect();
    let o = mergetrace(dir.path(), &["-o", "all.pftrace"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty() && o.stdout.is_empty(), "{}", stderr(&o));
    let merged = packets(&dir.path().join("all.pftrace"));
    let ins: Vec<Vec<Pkt>> = inputs.iter().map(|p| packets(p)).collect();
    assert_eq!(merged.len(), ins.iter().map(Vec::len).sum::<usize>());
    let parts = split(&merged, &ins);
    // The first input is copied byte for byte.
    let out = fs::read(dir.path().join("all.pftrace")).unwrap();
    assert!(out.starts_with(&before[0]));
    // The inputs share flow ids (bare kernel ids) ...
    let (f0, f1) = (flow_set(&ins[0]), flow_set(&ins[1]));
    assert!(!f0.is_disjoint(&f1), "test data should share flow ids");
    // ... the merge does not, and maps them one to one.
    let (m0, m1) = (flow_set(parts[0]), flow_set(parts[1]));
    assert!(m0.is_disjoint(&m1));
    assert_eq!(m0, f0);
    assert_eq!(m1.len(), f1.len());
    for (a, b) in ins[1].iter().zip(parts[1]) {
        let expect: Vec<u64> = a.flows.iter().map(|id| (1u64 << 32) | id).collect();
        assert_eq!(b.flows, expect);
        // Everything else of the packet is unchanged.
        assert_eq!(
            (a.timestamp, a.kind, a.event, &a.name, a.track, a.pid, a.tid),
            (b.timestamp, b.kind, b.event, &b.name, b.track, b.pid, b.tid)
        );
    }
    // Flow ends pair up within each input: every id appears on a host
    // slice and on a device slice.
    for part in &parts {
        let mut count: HashMap<u64, usize> = HashMap::new();
        for id in part.iter().flat_map(|p| &p.flows) {
            *count.entry(*id).or_default() += 1;
        }
        assert!(count.values().all(|&n| n == 2), "{count:?}");
    }
    assert_tracks_described(&merged);
    let after: Vec<Vec<u8>> = inputs.iter().map(|p| fs::read(p).unwrap()).collect();
    assert_eq!(before, after, "inputs must not change");
}

#[test]
fn colliding_track_uuids_are_renamed_per_input() {
    let dir = tempfile::tempdir().unwrap();
    let one = &files("legacy", "pftrace")[0];
    let a = dir.path().join("node_a.pftrace");
    let b = dir.path().join("node_b.pftrace");
    fs::copy(one, &a).unwrap();
    fs::copy(one, &b).unwrap();
    let o = mergetrace(dir.path(), &["-o", "m.pftrace"], &[a.clone(), b.clone()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Equal pids in two inputs: Perfetto would show one process.
    assert!(
        stderr(&o).contains("node_b.pftrace: process pid ")
            && stderr(&o).contains("also described by"),
        "{}",
        stderr(&o)
    );
    let merged = packets(&dir.path().join("m.pftrace"));
    let input = packets(&a);
    let parts = split(&merged, &[input.clone(), input.clone()]);
    let (u0, u1) = (uuid_set(parts[0]), uuid_set(parts[1]));
    assert_eq!(u0, uuid_set(&input));
    assert_eq!(u1.len(), u0.len());
    assert!(u0.is_disjoint(&u1), "every uuid of the copy is renamed");
    assert!(flow_set(parts[0]).is_disjoint(&flow_set(parts[1])));
    assert_tracks_described(&merged);
    // The renaming is consistent: the copy's events land on the copy's
    // tracks, in the same pattern as the original's.
    let map: HashMap<u64, u64> = parts[0]
        .iter()
        .zip(parts[1])
        .filter_map(|(x, y)| Some((x.track?, y.track?)))
        .collect();
    for (x, y) in parts[0].iter().zip(parts[1]) {
        if let (Some(tx), Some(ty)) = (x.track, y.track) {
            assert_eq!(map[&tx], ty);
        }
    }

    // --remap-pids: pids renumbered per input, no warning.
    let o = mergetrace(
        dir.path(),
        &["--remap-pids", "-o", "r.pftrace"],
        &[a.clone(), b.clone()],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    let merged = packets(&dir.path().join("r.pftrace"));
    let parts = split(&merged, &[input.clone(), input.clone()]);
    let pids = |s: &[Pkt]| -> HashSet<i32> { s.iter().filter_map(|p| p.pid).collect() };
    assert!(pids(parts[0]).is_disjoint(&pids(parts[1])));
    assert!(pids(parts[0]).iter().all(|&p| p > 0 && p < 100));
}

#[test]
fn truncated_input_keeps_its_complete_packets() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &files("cut", "pftrace"));
    let o = mergetrace(dir.path(), &["-o", "m.pftrace"], &inputs);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("mergetrace: warning: ")
            && err.contains("python.100042.1.pftrace: trace cut short at byte ")
            && err.contains("complete packets, dropped "),
        "{err}"
    );
    let bytes = fs::read(&inputs[1]).unwrap();
    let mut r = PacketReader::new(&bytes[..]);
    let mut complete = 0;
    while r.next_record().unwrap().is_some() {
        complete += 1;
    }
    let t = r.summary().truncation.clone().expect("input is cut");
    assert!(t.dropped_bytes > 0);
    let merged = fs::read(dir.path().join("m.pftrace")).unwrap();
    let mut r = PacketReader::new(&merged[..]);
    let mut n = 0;
    while r.next_record().unwrap().is_some() {
        n += 1;
    }
    assert!(r.summary().truncation.is_none(), "output is whole");
    let first = packets(&inputs[0]).len();
    assert_eq!(n, first + complete);
}

#[test]
fn malformed_packet_is_an_error_with_its_byte_offset() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = copy_to(dir.path(), &files("legacy", "pftrace"));
    // A complete record whose packet uses the (unsupported) group wire type.
    let mut bad = fs::read(&inputs[0]).unwrap();
    let at = bad.len();
    bad.extend_from_slice(b"\x0a\x02\x43\x00");
    fs::write(&inputs[0], &bad).unwrap();
    let o = mergetrace(dir.path(), &["-o", "m.pftrace"], &inputs);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        format!(
            "mergetrace: {}: byte {}: malformed TracePacket: unsupported wire type (groups are \
             not used) (--skip-invalid merges the other files)\n",
            inputs[0].display(),
            at + 2
        )
    );
    assert!(!dir.path().join("m.pftrace").exists());
    // --skip-invalid: one warning, the complete packets before it kept, also
    // with a window (two passes, one message).
    for extra in [&[][..], &["--time-window", ":1s"][..]] {
        let mut args = vec!["--skip-invalid", "-o", "s.pftrace"];
        args.extend_from_slice(extra);
        let o = mergetrace(dir.path(), &args, &inputs);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains("skipping the rest of this file"));
    }
    let n = packets(&dir.path().join("s.pftrace")).len();
    assert!(n > 0);
}

#[test]
fn mixed_formats_are_refused_as_the_original_does() {
    let dir = tempfile::tempdir().unwrap();
    let pf = copy_to(dir.path(), &files("legacy", "pftrace")[..1]);
    let js = copy_to(dir.path(), &files("legacy_json", "json")[..1]);
    let o = mergetrace(
        dir.path(),
        &["-o", "m.pftrace"],
        &[pf[0].clone(), js[0].clone()],
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        format!(
            "[ERROR] cannot merge mixed trace formats; got .pftrace inputs ['{}'] and \
             non-perfetto inputs ['{}']. Merge each format separately.\n",
            pf[0].display(),
            js[0].display()
        )
    );
    assert!(!dir.path().join("m.pftrace").exists());
    // A .pftrace output of JSON inputs is refused the same way.
    let o = mergetrace(dir.path(), &["-o", "x.pftrace"], &js);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("got .pftrace inputs [] and non-perfetto inputs ['"));
    assert!(!dir.path().join("x.pftrace").exists());
    // Without -o, .pftrace inputs go to unitrace.all.pftrace (the original
    // writes protobuf into unitrace.all.json).
    let o = mergetrace(dir.path(), &[], &pf);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        fs::read(dir.path().join("unitrace.all.pftrace")).unwrap(),
        fs::read(&pf[0]).unwrap()
    );
    assert!(!dir.path().join("unitrace.all.json").exists());
}

#[test]
fn stats_filter_and_window_match_the_json_form() {
    let dir = tempfile::tempdir().unwrap();
    let pf = copy_to(dir.path(), &files("legacy", "pftrace"));
    let js = copy_to(dir.path(), &files("legacy_json", "json"));
    let run = |args: &[&str], inputs: &[PathBuf]| {
        let o = mergetrace(dir.path(), args, inputs);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let a = run(&["--stats", "-o", "s.pftrace"], &pf).replace(".pftrace", ".X");
    // The JSON merge adds the newest original's success line; the .pftrace
    // merge prints nothing, as the original does.
    let b = run(&["--stats", "-o", "s.json"], &js)
        .replace("Successfully merged 2 files into s.json\n", "")
        .replace(".json", ".X");
    assert!(a.starts_with("GPU time per rank (2 ranks"), "{a}");
    assert_eq!(a, b);

    // Slices kept by --filter / --time-window: as many as JSON events.
    let slices_pf = |name: &str| {
        packets(&dir.path().join(name))
            .iter()
            .filter(|p| p.event == Some(EventType::SliceBegin))
            .count()
    };
    let ends_pf = |name: &str| {
        packets(&dir.path().join(name))
            .iter()
            .filter(|p| p.event == Some(EventType::SliceEnd))
            .count()
    };
    let slices_js = |name: &str| {
        let v: serde_json::Value =
            serde_json::from_slice(&fs::read(dir.path().join(name)).unwrap()).unwrap();
        v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["ph"] == "X" || e["ph"] == "B")
            .count()
    };
    for (opt, value) in [
        ("--filter", "^ze|gemm"),
        ("--time-window", "5ms:20ms"),
        ("--time-window", ":1ms"),
    ] {
        run(&[opt, value, "-o", "f.pftrace"], &pf);
        run(&[opt, value, "-o", "f.json"], &js);
        let n = slices_pf("f.pftrace");
        assert_eq!(n, slices_js("f.json"), "{opt} {value}");
        assert_eq!(n, ends_pf("f.pftrace"), "{opt} {value}: ends follow begins");
        assert!(n > 0 && n < slices_pf("s.pftrace"), "{opt} {value}: {n}");
        assert_tracks_described(&packets(&dir.path().join("f.pftrace")));
    }

    // --align start: every input starts where the earliest does; the
    // spacing of its timestamps is kept.
    run(&["--align", "start", "-o", "a.pftrace"], &pf);
    let merged = packets(&dir.path().join("a.pftrace"));
    let ins: Vec<Vec<Pkt>> = pf.iter().map(|p| packets(p)).collect();
    let parts = split(&merged, &ins);
    let first = |s: &[Pkt]| s.iter().find_map(|p| p.timestamp).unwrap();
    assert_eq!(first(parts[0]), first(parts[1]));
    for (input, part) in ins.iter().zip(&parts) {
        let shifts: HashSet<i128> = input
            .iter()
            .zip(part.iter())
            .filter_map(|(a, b)| Some(i128::from(a.timestamp?) - i128::from(b.timestamp?)))
            .collect();
        assert_eq!(shifts.len(), 1, "{shifts:?}");
    }

    // --ranks on file inputs: rank from the name.
    run(&["--ranks", "1", "-o", "r.pftrace"], &pf);
    assert_eq!(
        fs::read(dir.path().join("r.pftrace")).unwrap(),
        fs::read(&pf[1]).unwrap()
    );
}

#[test]
fn result_dir_discovery_order_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("res");
    copy_tree(&data("resultdir"), &tree);
    let rank_file = |r: u32| -> PathBuf {
        let d = fs::read_dir(&tree)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let n = p.file_name().unwrap().to_string_lossy().into_owned();
                n.starts_with(&format!("rank_{r}.python."))
            })
            .unwrap();
        d.join("chrome_trace.pftrace")
    };
    // All ranks, rank order.
    let o = mergetrace(
        dir.path(),
        &["--result-dir", "res", "-o", "all.pftrace"],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let total: usize = (0..3).map(|r| packets(&rank_file(r)).len()).sum();
    assert_eq!(packets(&dir.path().join("all.pftrace")).len(), total);
    let out = fs::read(dir.path().join("all.pftrace")).unwrap();
    assert!(out.starts_with(&fs::read(rank_file(0)).unwrap()));

    // --ranks in the given order, both spellings; a missing rank is warned.
    for ranks in [&["2", "0", "5"][..], &["2,0,5"][..]] {
        let mut args = vec!["--result-dir", "res/", "-o", "some.pftrace", "--ranks"];
        args.extend_from_slice(ranks);
        let o = mergetrace(dir.path(), &args, &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            stderr(&o),
            "mergetrace: warning: res/: no trace of rank 5; merged without it\n"
        );
        let out = fs::read(dir.path().join("some.pftrace")).unwrap();
        assert!(out.starts_with(&fs::read(rank_file(2)).unwrap()));
        let n = packets(&dir.path().join("some.pftrace")).len();
        assert_eq!(
            n,
            packets(&rank_file(2)).len() + packets(&rank_file(0)).len()
        );
    }

    // Nothing found: the original's message on stdout, exit 1.
    let o = mergetrace(dir.path(), &["--result-dir", "./res/", "--ranks", "7"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "Trace file is missing under res\n");
    assert!(!dir.path().join("unitrace.all.json").exists());

    // Argument errors: exit 2 with the original's texts.
    let cases: [(&[&str], &[PathBuf], &str); 4] = [
        (
            &["--result-dir", "nope"],
            &[],
            "Directory 'nope' does not exist",
        ),
        (
            &["--result-dir", "all.pftrace"],
            &[],
            "'all.pftrace' is not a directory",
        ),
        (
            &["--result-dir", "res"],
            &[PathBuf::from("x.json")],
            "Cannot use both input files and --result-dir",
        ),
        (&[], &[], "Must provide either input files or --result-dir"),
    ];
    for (args, inputs, msg) in cases {
        let o = mergetrace(dir.path(), args, inputs);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(msg), "{args:?}: {}", stderr(&o));
    }

    // JSON is preferred over .pftrace when both exist.
    let json_src = &files("legacy_json", "json")[0];
    let with_json = rank_file(1).with_file_name("chrome_trace.json");
    fs::copy(json_src, &with_json).unwrap();
    let o = mergetrace(dir.path(), &["--result-dir", "res", "-o", "j.json"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.path().join("j.json")).unwrap()).unwrap();
    let src: serde_json::Value = serde_json::from_slice(&fs::read(json_src).unwrap()).unwrap();
    assert_eq!(v["traceEvents"], src["traceEvents"]);
}
