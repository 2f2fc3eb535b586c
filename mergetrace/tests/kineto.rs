//! PyTorch profiler (Kineto) traces and gzip through mergetrace
//! (docs/mergetrace.md#kineto): our 4-rank recordings merged into one
//! timeline whose ranks share no process and no flow, labelled by rank and
//! aligned on their clock bases; `--stats` read through Kineto's
//! vocabulary; gzip in (JSON and `.pftrace`, told by content) and out.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn kineto(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/kineto")
        .join(rel)
}

fn trace_data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/trace")
        .join(rel)
}

fn planted() -> Vec<PathBuf> {
    (0..4)
        .map(|r| kineto(&format!("recorded/planted/rank{r}.pt.trace.json.gz")))
        .collect()
}

fn mergetrace(cwd: &Path, args: &[&str], inputs: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mergetrace"))
        .current_dir(cwd)
        .args(args)
        .args(inputs)
        .output()
        .unwrap()
}

fn inflate(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn events(doc: &Value) -> &Vec<Value> {
    doc["traceEvents"].as_array().unwrap()
}

/// Whether an event of the merge is one of its own `process_name`s, written
/// before a process's first event (docs/mergetrace.md#kineto): Kineto's
/// events all carry `ts` and `tid`, these carry neither.
fn is_added_label(e: &Value) -> bool {
    e["ph"] == "M" && e["name"] == "process_name" && e.get("ts").is_none()
}

/// The events of a merge that came from its inputs, in order.
fn input_events(merged: &Value) -> Vec<&Value> {
    events(merged)
        .iter()
        .filter(|e| !is_added_label(e))
        .collect()
}

#[test]
fn ranks_of_a_kineto_run_share_no_process_and_no_flow() {
    let dir = tempfile::tempdir().unwrap();
    let out = mergetrace(dir.path(), &["-o", "all.json"], &planted());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged: Value =
        serde_json::from_slice(&fs::read(dir.path().join("all.json")).unwrap()).unwrap();
    let inputs: Vec<Value> = planted()
        .iter()
        .map(|p| serde_json::from_slice(&inflate(&fs::read(p).unwrap())).unwrap())
        .collect();
    let total: usize = inputs.iter().map(|d| events(d).len()).sum();
    let all = input_events(&merged);
    assert_eq!(all.len(), total);
    // The merge states the inputs' common clock base.
    assert_eq!(
        merged["baseTimeNanoseconds"],
        inputs[0]["baseTimeNanoseconds"]
    );
    // Every process is named with its rank before its first event (Kineto
    // names its processes after their events), so that a reader going
    // front to back knows each event's rank.
    let mut rank_of: BTreeMap<u64, String> = BTreeMap::new();
    for e in events(&merged) {
        let pid = e["pid"].as_u64().unwrap();
        if is_added_label(e) {
            let label = e["args"]["name"].as_str().unwrap().to_string();
            assert!(
                rank_of.insert(pid, label).is_none(),
                "pid {pid} labelled twice"
            );
        } else if e["ph"] == "M" && e["name"] == "process_name" {
            let name = e["args"]["name"].as_str().unwrap();
            // A process without events (an idle GPU) is named first.
            let label = rank_of
                .entry(pid)
                .or_insert_with(|| name.splitn(3, ' ').take(2).collect::<Vec<_>>().join(" "));
            assert!(name.starts_with(&format!("{label} ")), "{name}");
        } else {
            assert!(rank_of.contains_key(&pid), "pid {pid} before its name: {e}");
        }
    }
    let labels: BTreeSet<&str> = rank_of.values().map(String::as_str).collect();
    assert_eq!(
        labels,
        BTreeSet::from(["rank 0", "rank 1", "rank 2", "rank 3"])
    );
    // The events of each input follow one another: their pids form
    // disjoint sets (every input has device pids 0..3 of its own).
    let mut at = 0;
    let mut seen_pids: BTreeSet<u64> = BTreeSet::new();
    let mut seen_flows: BTreeSet<(String, u64)> = BTreeSet::new();
    for (rank, input) in inputs.iter().enumerate() {
        let n = events(input).len();
        let mine = &all[at..at + n];
        at += n;
        let pids: BTreeSet<u64> = mine.iter().map(|e| e["pid"].as_u64().unwrap()).collect();
        assert!(seen_pids.is_disjoint(&pids), "rank {rank}");
        seen_pids.extend(pids);
        for (e, orig) in mine.iter().zip(events(input)) {
            // Times, names and arguments are the input's.
            assert_eq!(e["ts"], orig["ts"]);
            assert_eq!(e["name"], orig["name"]);
            if e["name"] != "process_name" {
                assert_eq!(e["args"], orig["args"]);
            }
            if matches!(e["ph"].as_str(), Some("s" | "f")) {
                let id = e["id"].as_u64().unwrap();
                assert_eq!(id >> 32, rank as u64);
                assert_eq!(id & 0xffff_ffff, orig["id"].as_u64().unwrap());
                seen_flows.insert((e["cat"].as_str().unwrap().to_string(), id));
            }
            if e["ph"] == "M" && e["name"] == "process_name" {
                let name = e["args"]["name"].as_str().unwrap();
                assert!(name.starts_with(&format!("rank {rank} ")), "{name}");
            }
        }
    }
    assert!(seen_flows.len() > 1000);
}

#[test]
fn stats_of_a_kineto_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = mergetrace(
        dir.path(),
        &["-o", "all.json", "--stats", "s.csv"],
        &planted(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = fs::read_to_string(dir.path().join("s.csv")).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let mut ranks = BTreeMap::new();
    let mut nccl_range = None;
    for rec in reader.records() {
        let rec = rec.unwrap();
        if &rec[0] == "rank" {
            ranks.insert(
                rec[col("rank")].to_string(),
                (
                    rec[col("count")].to_string(),
                    rec[col("total_us")].parse::<f64>().unwrap(),
                ),
            );
        } else if rec[col("kernel")].starts_with("ncclDevKernel") && &rec[col("rank")] == "1" {
            nccl_range = Some(rec[col("host_range")].to_string());
        }
    }
    // Per rank: the number and summed duration of the device events,
    // counted here from the JSON.
    for (r, path) in planted().iter().enumerate() {
        let doc: Value = serde_json::from_slice(&inflate(&fs::read(path).unwrap())).unwrap();
        let dev: Vec<&Value> = events(&doc)
            .iter()
            .filter(|e| {
                ["kernel", "gpu_memcpy", "gpu_memset"].contains(&e["cat"].as_str().unwrap_or(""))
            })
            .collect();
        let sum_ns: i64 = dev
            .iter()
            .map(|e| (e["dur"].as_f64().unwrap() * 1000.0).round() as i64)
            .sum();
        let (count, total) = &ranks[&r.to_string()];
        assert_eq!(count, &dev.len().to_string());
        assert!(
            (total - sum_ns as f64 / 1000.0).abs() < 1e-3,
            "rank {r}: {total} against {sum_ns} ns"
        );
    }
    // NCCL kernels are launched inside `nccl:all_reduce`, through the
    // driver call's correlation.
    assert_eq!(nccl_range.as_deref(), Some("nccl:all_reduce"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("GPU time per rank (4 ranks"), "{stdout}");
}

#[test]
fn kineto_clock_bases_are_aligned() {
    // Rank 1 rewritten with a base one second later and every `ts` one
    // second (1e6 µs) earlier: the same instants. The merge puts it back on
    // rank 0's base.
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(inflate(&fs::read(&planted()[1]).unwrap())).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let base = doc["baseTimeNanoseconds"].as_i64().unwrap();
    doc["baseTimeNanoseconds"] = Value::from(base + 1_000_000_000);
    for e in doc["traceEvents"].as_array_mut().unwrap() {
        if let Some(ts) = e["ts"].as_f64() {
            e["ts"] = Value::from(((ts - 1e6) * 1000.0).round() / 1000.0);
        }
    }
    let moved = dir.path().join("moved.json");
    fs::write(&moved, serde_json::to_vec(&doc).unwrap()).unwrap();
    let out = mergetrace(
        dir.path(),
        &["-o", "all.json"],
        &[planted()[0].clone(), moved],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let merged: Value =
        serde_json::from_slice(&fs::read(dir.path().join("all.json")).unwrap()).unwrap();
    let orig: Value = serde_json::from_str(&text).unwrap();
    let n0 = events(
        &serde_json::from_slice::<Value>(&inflate(&fs::read(&planted()[0]).unwrap())).unwrap(),
    )
    .len();
    // On rank 0's base, which the merge states.
    assert_eq!(merged["baseTimeNanoseconds"], Value::from(base));
    let rank1 = &input_events(&merged)[n0..];
    let mut checked = 0;
    for (e, o) in rank1.iter().zip(events(&orig)) {
        if let (Some(a), Some(b)) = (e["ts"].as_f64(), o["ts"].as_f64()) {
            assert!((a - b).abs() < 1e-3, "{a} against {b}");
            checked += 1;
        }
    }
    assert!(checked > 5000);
}

#[test]
fn gzip_in_and_out() {
    let dir = tempfile::tempdir().unwrap();
    // Plain and gzipped unitrace JSON inputs, under names that say nothing.
    let plain: Vec<PathBuf> = ["python.100028.0.json", "python.107924.1.json"]
        .iter()
        .map(|n| trace_data(&format!("pftrace/legacy_json/{n}")))
        .collect();
    let gz: Vec<PathBuf> = plain
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let to = dir.path().join(format!("python.{}.{i}.json.gz", 100 + i));
            fs::write(&to, gzip(&fs::read(p).unwrap())).unwrap();
            to
        })
        .collect();
    let a = mergetrace(dir.path(), &["-o", "a.json"], &plain);
    let b = mergetrace(dir.path(), &["-o", "b.json.gz"], &gz);
    assert!(
        a.status.success() && b.status.success(),
        "{}",
        String::from_utf8_lossy(&b.stderr)
    );
    let a_bytes = fs::read(dir.path().join("a.json")).unwrap();
    let b_bytes = fs::read(dir.path().join("b.json.gz")).unwrap();
    assert!(b_bytes.starts_with(&[0x1f, 0x8b]));
    assert_eq!(inflate(&b_bytes), a_bytes);
    // `.pftrace.gz`: a protobuf merge by content.
    let pf: Vec<PathBuf> = ["python.100028.0.pftrace", "python.107924.1.pftrace"]
        .iter()
        .map(|n| trace_data(&format!("pftrace/legacy/{n}")))
        .collect();
    let pfgz: Vec<PathBuf> = pf
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let to = dir.path().join(format!("r{i}.pftrace.gz"));
            fs::write(&to, gzip(&fs::read(p).unwrap())).unwrap();
            to
        })
        .collect();
    let c = mergetrace(dir.path(), &["-o", "c.pftrace"], &pf);
    let d = mergetrace(dir.path(), &["-o", "d.pftrace"], &pfgz);
    assert!(
        c.status.success() && d.status.success(),
        "{}",
        String::from_utf8_lossy(&d.stderr)
    );
    assert_eq!(
        fs::read(dir.path().join("c.pftrace")).unwrap(),
        fs::read(dir.path().join("d.pftrace")).unwrap()
    );
}

#[test]
fn gzip_of_something_else_is_one_line_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("x.json.gz");
    fs::write(&bad, gzip(b"Kernel, GpuTime\n1,2\n")).unwrap();
    let out = mergetrace(
        dir.path(),
        &["-o", "all.json"],
        &[planted()[0].clone(), bad.clone()],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("mergetrace: {}: not a trace", bad.display())),
        "{stderr}"
    );
    assert!(!dir.path().join("all.json").exists());
}

/// tracestat's `--json` report of `inputs` (run in-process, with `extra`
/// options), without the `file` of each rank.
fn tracestat_report(inputs: &[PathBuf], json: &Path, extra: &[&std::ffi::OsStr]) -> Value {
    use clap::Parser as _;
    let mut argv: Vec<std::ffi::OsString> = vec!["tracestat".into(), "-q".into()];
    argv.extend(["--json".into(), json.as_os_str().to_owned()]);
    argv.extend(extra.iter().map(|&a| a.to_owned()));
    argv.extend(inputs.iter().map(|p| p.as_os_str().to_owned()));
    let args = tracestat::args::Args::try_parse_from(argv).unwrap();
    tracestat::run(args).unwrap();
    let mut doc: Value = serde_json::from_slice(&fs::read(json).unwrap()).unwrap();
    for row in doc["breakdown"].as_array_mut().unwrap() {
        row.as_object_mut().unwrap().remove("file");
    }
    doc
}

/// The round trip of docs/tracestat.md#usage: tracestat reads a merged
/// Kineto run as it reads the ranks' own files. The merge names every
/// process with its rank before the process's first event and states the
/// ranks' common clock base (docs/mergetrace.md#kineto), so the whole
/// report is expected equal, not only close: per rank its busy time,
/// kernels, launches and steps, the collectives matched across ranks and
/// their waits, the straggler, the heatmap (its grid is anchored at
/// absolute times). Only each rank's `file` differs. Plain and gzipped
/// output alike.
#[test]
fn tracestat_reads_a_merged_kineto_run_as_its_rank_files() {
    let dir = tempfile::tempdir().unwrap();
    let files = tracestat_report(&planted(), &dir.path().join("files.json"), &[]);
    // What the equality below carries, spelled out.
    assert_eq!(files["ranks"], 4);
    let per_rank = |doc: &Value, table: &str, key: &str| -> Vec<Value> {
        doc[table]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["rank"] != "all")
            .map(|r| r[key].clone())
            .collect()
    };
    assert_eq!(
        per_rank(&files, "launches", "kernels"),
        [313, 314, 314, 290]
    );
    assert_eq!(files["collective_summary"][0]["instances"], 15);
    assert_eq!(files["clock_alignment"]["matched"], 15);
    assert_eq!(files["straggler"]["rank"], "1");
    for name in ["all.json", "all.json.gz"] {
        let out = mergetrace(dir.path(), &["-o", name], &planted());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let merged = tracestat_report(
            &[dir.path().join(name)],
            &dir.path().join(format!("{name}.report.json")),
            &[],
        );
        for (table, key) in [
            ("breakdown", "busy_us"),
            ("launches", "kernels"),
            ("steps", "step"),
        ] {
            assert_eq!(
                per_rank(&merged, table, key),
                per_rank(&files, table, key),
                "{name}: {table}.{key}"
            );
        }
        assert_eq!(merged["collectives"], files["collectives"], "{name}");
        assert_eq!(merged, files, "{name}: the whole report");
    }
}

/// tracestat's `--annotate` writes its inputs as this merge writes them
/// (both through `unitrace_core`'s merged-input edits,
/// docs/tracestat.md#annotated-trace): the annotated trace is the merge
/// plus tracestat's own tracks, for Kineto JSON ranks and `.pftrace` ranks.
#[test]
fn tracestat_annotate_writes_the_ranks_as_the_merge_does() {
    let dir = tempfile::tempdir().unwrap();
    let pftraces: Vec<PathBuf> = ["rank_0.python.100017", "rank_1.python.100059"]
        .iter()
        .map(|d| trace_data(&format!("pftrace/resultdir/{d}/chrome_trace.pftrace")))
        .collect();
    for (inputs, merged, annotated) in [
        (planted(), "all.json", "annotated.json"),
        (pftraces, "all.pftrace", "annotated.pftrace"),
    ] {
        let out = mergetrace(dir.path(), &["-o", merged], &inputs);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let annotated = dir.path().join(annotated);
        tracestat_report(
            &inputs,
            &dir.path().join("report.json"),
            &["--annotate".as_ref(), annotated.as_os_str()],
        );
        let (merged, annotated) = (
            fs::read(dir.path().join(merged)).unwrap(),
            fs::read(&annotated).unwrap(),
        );
        if annotated.starts_with(b"{") {
            let (m, a): (Value, Value) = (
                serde_json::from_slice(&merged).unwrap(),
                serde_json::from_slice(&annotated).unwrap(),
            );
            let inputs_part: Vec<&Value> = events(&a)
                .iter()
                .filter(|e| e["pid"].as_u64().is_some_and(|p| p < 0x7ac0_0000))
                .collect();
            assert_eq!(inputs_part, events(&m).iter().collect::<Vec<_>>());
            assert_eq!(a["baseTimeNanoseconds"], m["baseTimeNanoseconds"]);
        } else {
            assert_eq!(&annotated[..merged.len()], &merged[..]);
        }
    }
}

/// A `baseTimeNanoseconds` or `distributedInfo.rank` that is no JSON
/// integer in range (a string, even of digits; a negative, fractional or
/// too large number) is ignored with one warning naming it, in
/// tracestat's words: the merge is that of the file without the member,
/// never one shifted by a base taken as 0 or wrapped
/// (docs/formats.md#kineto-json-reading).
#[test]
fn an_unusable_clock_base_or_rank_is_one_warning_and_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(inflate(&fs::read(&planted()[1]).unwrap())).unwrap();
    let base = "\"baseTimeNanoseconds\": 1790857026000000000,";
    let rank = "\"rank\": 1, \"world_size\"";
    assert!(text.contains(base) && text.contains(rank));
    let merge = |name: &str, text: &str| {
        fs::write(dir.path().join(name), text).unwrap();
        let inputs = [planted()[0].clone(), PathBuf::from(name)];
        let out = mergetrace(dir.path(), &["-o", "all.json"], &inputs);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        (fs::read(dir.path().join("all.json")).unwrap(), err)
    };
    let (without_base, err) = merge("r.json", &text.replace(base, ""));
    assert_eq!(err, "");
    let (without_rank, err) = merge("r.json", &text.replace(rank, "\"world_size\""));
    assert_eq!(err, "");
    for (value, shown) in [
        (
            "\"1790857026000000000\"",
            "`\"1790857026000000000\"` (a string)",
        ),
        ("-1790857026000000000", "`-1790857026000000000`"),
        ("1.790857026e18", "`1.790857026e18`"),
        ("18446744073709551615", "`18446744073709551615`"),
    ] {
        let bad = text.replace(base, &format!("\"baseTimeNanoseconds\": {value},"));
        let (merged, err) = merge("r.json", &bad);
        assert_eq!(
            err,
            format!(
                "mergetrace: warning: r.json: baseTimeNanoseconds {shown} is not a whole number \
                 of nanoseconds from 0 to 9223372036854775807; ignored: times are read as if the \
                 file had none\n"
            )
        );
        assert!(merged == without_base, "{value}");
    }
    for (value, shown) in [
        ("\"1\"", "`\"1\"` (a string)"),
        ("-1", "`-1`"),
        ("1.5", "`1.5`"),
        ("1099511627776", "`1099511627776`"),
        ("null", "`null`"),
    ] {
        let bad = text.replace(rank, &format!("\"rank\": {value}, \"world_size\""));
        let (merged, err) = merge("r.json", &bad);
        assert_eq!(
            err,
            format!(
                "mergetrace: warning: r.json: distributedInfo.rank {shown} is not a whole number \
                 from 0 to 4294967295; ignored\n"
            )
        );
        assert!(merged == without_rank, "{value}");
    }
}
