//! `--events DIR`: the rows of the Parquet dataset on hand-built traces,
//! `.pftrace` against JSON, resuming an interrupted export, bad input, and
//! the DuckDB queries of docs/sql.md against tracestat's own tables
//! (docs/tracestat.md#events).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use bytes_free::rows_of_dataset;
use parquet::record::Field;

use crate::common::{coll_files, data, gen_files, run};

/// Reads a dataset back with the `parquet` crate (no engine needed).
pub mod bytes_free {
    use std::collections::BTreeMap;
    use std::path::Path;

    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    pub type Row = BTreeMap<String, Field>;

    /// Every row of every part, with `rank` from the partition folder.
    pub fn rows_of_dataset(dir: &Path) -> Vec<Row> {
        let mut out = Vec::new();
        let mut ranks: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        ranks.sort();
        for rdir in ranks {
            let name = rdir.file_name().unwrap().to_string_lossy().into_owned();
            let rank: i64 = name.strip_prefix("rank=").unwrap().parse().unwrap();
            let mut parts: Vec<_> = std::fs::read_dir(&rdir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
                .collect();
            parts.sort();
            for p in parts {
                let reader = SerializedFileReader::new(std::fs::File::open(&p).unwrap()).unwrap();
                for row in reader.get_row_iter(None).unwrap() {
                    let mut m: Row = row
                        .unwrap()
                        .get_column_iter()
                        .map(|(k, f)| (k.clone(), f.clone()))
                        .collect();
                    m.insert("rank".into(), Field::Long(rank));
                    out.push(m);
                }
            }
        }
        out
    }
}

type Row = BTreeMap<String, Field>;

pub fn export(inputs: &[PathBuf], out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<&std::ffi::OsStr> = inputs.iter().map(|p| p.as_os_str()).collect();
    args.push("--events".as_ref());
    args.push(out.as_os_str());
    for e in extra {
        args.push(e.as_ref());
    }
    run(&args)
}

pub fn s(r: &Row, k: &str) -> Option<String> {
    match r.get(k) {
        Some(Field::Str(s)) => Some(s.clone()),
        Some(Field::Null) | None => None,
        Some(other) => panic!("{k}: not a string: {other:?}"),
    }
}

pub fn n(r: &Row, k: &str) -> Option<i64> {
    match r.get(k) {
        Some(Field::Long(v)) => Some(*v),
        Some(Field::Null) | None => None,
        Some(other) => panic!("{k}: not an integer: {other:?}"),
    }
}

fn find<'a>(rows: &'a [Row], name: &str) -> &'a Row {
    let hits: Vec<&Row> = rows
        .iter()
        .filter(|r| s(r, "name").as_deref() == Some(name))
        .collect();
    assert_eq!(hits.len(), 1, "rows named {name}: {hits:?}");
    hits[0]
}

const US: i64 = 1000;
const T0: i64 = 1_700_000_000_000_000 * US;

#[test]
fn kernel_rows_carry_their_launch_and_host_range() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ev");
    let o = export(&[data("hand.1000.0.json")], &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.join("rank=0/_SUCCESS").is_file());
    assert!(out.join("rank=0/part-00000.parquet").is_file());
    let rows = rows_of_dataset(&out);
    // 5 device commands + 10 host calls; flows and metadata are no rows.
    assert_eq!(rows.len(), 15, "{rows:#?}");

    let gemm = find(&rows, "gemm[SIMD16 {8; 1; 1} {64; 1; 1}]");
    assert_eq!(n(gemm, "rank"), Some(0));
    assert_eq!(s(gemm, "kind").as_deref(), Some("kernel"));
    assert_eq!(s(gemm, "cat").as_deref(), Some("gpu_op"));
    assert_eq!(s(gemm, "short_name").as_deref(), Some("gemm"));
    assert_eq!(s(gemm, "category").as_deref(), Some("compute"));
    assert_eq!(n(gemm, "start_ns"), Some(T0 + 100 * US));
    assert_eq!(n(gemm, "duration_ns"), Some(200 * US));
    assert_eq!(n(gemm, "instance_id"), Some(1));
    assert_eq!(n(gemm, "pid"), Some(4294967295));
    assert_eq!(
        s(gemm, "thread").as_deref(),
        Some("Thread 1000 L0 Compute Engine<0,0>")
    );
    assert_eq!(
        s(gemm, "process").as_deref(),
        Some("RANK 0 DEVICE<node0>[GPU] 0:0:0:0 #0")
    );
    // Launched at 20 us inside aten::mm (10..40) inside aten::linear (0..100).
    assert_eq!(s(gemm, "host_range").as_deref(), Some("PyTorch::aten::mm"));
    assert_eq!(
        s(gemm, "launch_call").as_deref(),
        Some("zeCommandListAppendLaunchKernel")
    );
    assert_eq!(n(gemm, "launch_latency_ns"), Some(80 * US));

    // Launched at 50 us: in aten::linear only.
    let bias = find(&rows, "bias_add");
    assert_eq!(
        s(bias, "host_range").as_deref(),
        Some("PyTorch::aten::linear")
    );
    assert_eq!(n(bias, "launch_latency_ns"), Some(250 * US));

    // Launched inside the oneCCL call: communication, as the report says.
    let ar = find(&rows, "allreduce_kernel");
    assert_eq!(
        s(ar, "host_range").as_deref(),
        Some("oneCCL::API::ALLREDUCE_SMALL")
    );
    assert_eq!(s(ar, "category").as_deref(), Some("communication"));

    // A copy on the copy engine, launched outside any range.
    let copy = find(&rows, "zeCommandListAppendMemoryCopy(M2D)[4096]");
    assert_eq!(s(copy, "kind").as_deref(), Some("memory"));
    assert_eq!(s(copy, "category").as_deref(), Some("memory"));
    assert_eq!(
        s(copy, "short_name").as_deref(),
        Some("zeCommandListAppendMemoryCopy(M2D)")
    );
    assert_eq!(s(copy, "host_range"), None);
    assert_eq!(
        s(copy, "launch_call").as_deref(),
        Some("zeCommandListAppendMemoryCopy")
    );
    assert_eq!(n(copy, "launch_latency_ns"), Some(220 * US));

    // Launched at 700 us, where the sync call (400..700) ends and the
    // launch call begins: the launch is the call the flow starts in.
    let softmax = find(&rows, "softmax");
    assert_eq!(
        s(softmax, "launch_call").as_deref(),
        Some("zeCommandListAppendLaunchKernel")
    );
    assert_eq!(n(softmax, "launch_latency_ns"), Some(100 * US));

    // Host rows: kinds and the range each ran under.
    let linear = find(&rows, "PyTorch::aten::linear");
    assert_eq!(s(linear, "kind").as_deref(), Some("host_range"));
    assert_eq!(s(linear, "host_range"), None);
    assert_eq!(s(linear, "category"), None);
    let mm = find(&rows, "PyTorch::aten::mm");
    assert_eq!(
        s(mm, "host_range").as_deref(),
        Some("PyTorch::aten::linear")
    );
    let ccl = find(&rows, "oneCCL::API::ALLREDUCE_SMALL");
    assert_eq!(s(ccl, "kind").as_deref(), Some("collective"));
    assert_eq!(n(ccl, "bytes"), Some(1_048_576));
    assert_eq!(s(ccl, "host_range"), None);
    let launches: Vec<&Row> = rows
        .iter()
        .filter(|r| s(r, "name").as_deref() == Some("zeCommandListAppendLaunchKernel"))
        .collect();
    assert_eq!(launches.len(), 4);
    for l in launches {
        assert_eq!(s(l, "kind").as_deref(), Some("api_call"));
        let expected = match (n(l, "start_ns").unwrap() - T0) / US {
            20 => Some("PyTorch::aten::mm"),
            50 => Some("PyTorch::aten::linear"),
            115 => Some("oneCCL::API::ALLREDUCE_SMALL"),
            700 => None,
            other => panic!("unexpected launch at {other} us"),
        };
        assert_eq!(s(l, "host_range").as_deref(), expected);
    }
}

#[test]
fn implausible_events_are_left_out_as_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ev");
    let o = export(&coll_files(), &out, &["--ranks", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("implausible"), "{stderr}");
    // Only rank 1 was asked for.
    let dirs: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(dirs, vec!["rank=1".to_string()]);
    let rows = rows_of_dataset(&out);
    let names: Vec<String> = rows.iter().filter_map(|r| s(r, "name")).collect();
    for bad in ["bad_negative", "bad_zero", "bad_too_long", "jumped_clock"] {
        assert!(!names.iter().any(|n| n == bad), "{bad} in {names:?}");
    }
    assert!(names.iter().any(|n| n == "gemm"));
}

/// The columns that must agree between a JSON trace and the `.pftrace`
/// of the same run (ids of tracks and flows are the format's own).
fn comparable(rows: &[Row]) -> Vec<Vec<String>> {
    let cols = [
        "rank",
        "kind",
        "name",
        "short_name",
        "category",
        "start_ns",
        "duration_ns",
        "host_range",
        "launch_call",
        "launch_latency_ns",
        "bytes",
        "thread",
    ];
    let mut v: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let device = matches!(s(r, "kind").as_deref(), Some("kernel" | "memory"));
            cols.iter()
                .map(|c| match r.get(*c) {
                    // `.pftrace` names host threads (`Thread <tid>`), JSON
                    // does not: engine names are compared, host ones not.
                    Some(_) if *c == "thread" && !device => "host".into(),
                    Some(f) => f.to_string(),
                    None => "null".into(),
                })
                .collect()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn pftrace_rows_equal_json_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("json"), dir.path().join("pf"));
    let o = export(&gen_files(), &a, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut pf: Vec<PathBuf> = std::fs::read_dir(data("gen-pftrace"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pf.sort();
    let o = export(&pf, &b, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (ja, pb) = (
        comparable(&rows_of_dataset(&a)),
        comparable(&rows_of_dataset(&b)),
    );
    assert!(ja.len() > 1000, "{} rows", ja.len());
    assert_eq!(ja.len(), pb.len());
    for (x, y) in ja.iter().zip(&pb) {
        assert_eq!(x, y);
    }
}

/// Per rank of a dataset: (device time in ns, device commands, commands
/// with a launch) of its device rows.
fn device_totals_of_rows(rows: &[Row]) -> BTreeMap<i64, (i64, u64, u64)> {
    let mut m = BTreeMap::new();
    for r in rows {
        if !matches!(s(r, "kind").as_deref(), Some("kernel" | "memory")) {
            continue;
        }
        let e = m.entry(n(r, "rank").unwrap()).or_insert((0, 0, 0));
        e.0 += n(r, "duration_ns").unwrap();
        e.1 += 1;
        e.2 += u64::from(n(r, "launch_latency_ns").is_some());
    }
    m
}

/// The same numbers from the report: each rank's `breakdown` row over all
/// its devices (`kernel_time_us`, `launches`) and its `launches` row
/// (`with_flow`).
fn device_totals_of_report(doc: &serde_json::Value) -> BTreeMap<i64, (i64, u64, u64)> {
    let all = |table: &str| -> Vec<serde_json::Value> {
        doc[table]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["device"] == "all")
            .cloned()
            .collect()
    };
    let mut m = BTreeMap::new();
    for (b, l) in all("breakdown").iter().zip(all("launches")) {
        assert_eq!(b["rank"], l["rank"]);
        let rank: i64 = b["rank"].as_str().unwrap().parse().unwrap();
        let ns = (b["kernel_time_us"].as_f64().unwrap() * 1000.0).round() as i64;
        let launches = b["launches"].as_u64().unwrap();
        let with_flow = l["with_flow"].as_u64().unwrap();
        m.insert(rank, (ns, launches, with_flow));
    }
    m
}

/// The export reads through the source the report reads (docs/formats.md#timeline-model):
/// on unitrace JSON, `.pftrace`, gzipped JSON, a merged trace and a
/// PyTorch profiler (Kineto) trace, every rank has the report's device
/// time, device commands and flow-linked launches; the Kineto rows are
/// its kernels, memory copies and fills, runtime calls and `cpu_op` ranges.
#[test]
fn the_export_agrees_with_the_report_on_every_input_format() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    // A unitrace JSON trace, gzipped, named as unitrace names it.
    let gz_dir = dir.path().join("gz");
    std::fs::create_dir(&gz_dir).unwrap();
    let plain = &gen_files()[1];
    let gz = gz_dir.join(format!(
        "{}.gz",
        plain.file_name().unwrap().to_string_lossy()
    ));
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    enc.write_all(&std::fs::read(plain).unwrap()).unwrap();
    enc.finish().unwrap();
    let pftrace: Vec<PathBuf> = std::fs::read_dir(data("gen-pftrace"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let kineto = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/kineto/recorded/clean/rank0.pt.trace.json.gz");
    let inputs: [(&str, Vec<PathBuf>, usize); 5] = [
        ("json", gen_files(), 3),
        ("pftrace", pftrace, 3),
        ("gzipped json", vec![gz], 1),
        ("merged json", vec![data("merged.json")], 4),
        ("kineto", vec![kineto], 1),
    ];
    for (what, files, ranks) in inputs {
        let out = dir.path().join(what.replace(' ', "-"));
        let o = export(&files, &out, &["-q"]);
        assert!(
            o.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let rows = rows_of_dataset(&out);
        let exported = device_totals_of_rows(&rows);
        let (doc, _, _) = crate::common::report(&files, &["-q"]);
        let reported = device_totals_of_report(&doc);
        assert_eq!(exported.len(), ranks, "{what}: {exported:?}");
        assert_eq!(exported, reported, "{what}: export vs report");
        assert!(exported.values().all(|t| t.0 > 0 && t.2 > 0), "{what}");
        if what != "kineto" {
            continue;
        }
        // Kineto's vocabulary (docs/formats.md#kineto-json-events) in the
        // rows: kernels, copies and fills as memory, with their launch.
        let count = |kind: &str, cat: &str| {
            rows.iter()
                .filter(|r| {
                    s(r, "kind").as_deref() == Some(kind) && s(r, "cat").as_deref() == Some(cat)
                })
                .count()
        };
        assert_eq!(count("kernel", "kernel"), 175);
        assert_eq!(count("memory", "gpu_memcpy"), 90);
        assert_eq!(count("memory", "gpu_memset"), 25);
        assert_eq!(count("api_call", "cuda_runtime"), 756);
        assert_eq!(
            count("host_range", "cpu_op") + count("collective", "cpu_op"),
            1125
        );
        let copy = rows
            .iter()
            .find(|r| s(r, "name").as_deref() == Some("Memcpy HtoD (Pinned -> Device)"))
            .unwrap();
        assert_eq!(s(copy, "category").as_deref(), Some("memory"));
        assert_eq!(s(copy, "launch_call").as_deref(), Some("cudaMemcpyAsync"));
        assert!(n(copy, "instance_id").is_some());
        // The collective calls carry their size and process group.
        let coll: Vec<&Row> = rows
            .iter()
            .filter(|r| s(r, "kind").as_deref() == Some("collective"))
            .collect();
        assert_eq!(coll.len(), 15);
        assert!(coll.iter().all(|r| {
            s(r, "name").as_deref() == Some("record_param_comms")
                && n(r, "bytes").is_some_and(|b| b > 0)
                && s(r, "comm").is_some()
        }));
        // A kernel's host range is the framework op that launched it.
        let gemm = rows
            .iter()
            .find(|r| s(r, "name").is_some_and(|n| n.starts_with("sm80_xmma_gemm")))
            .unwrap();
        assert_eq!(s(gemm, "host_range").as_deref(), Some("aten::addmm"));
        assert_eq!(
            s(gemm, "launch_call").as_deref(),
            Some("cudaLaunchKernelExC")
        );
    }
}

/// The path decides a file's rank over its `RANK r` process names
/// (docs/formats.md#timeline-ranks): a result-dir folder `rank_7...` whose
/// trace says `RANK 0` is partition `rank=7`, every row of it, as the
/// report counts it. (The export's own router used to follow the process
/// names and write it as `rank=0`, unlike the report.)
#[test]
fn a_rank_folder_decides_over_the_process_names() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("rank_7.python.1000");
    std::fs::create_dir(&folder).unwrap();
    let trace = folder.join("chrome_trace.json");
    std::fs::copy(data("hand.1000.0.json"), &trace).unwrap();
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains("RANK 0 HOST"), "the trace names rank 0");
    let out = dir.path().join("ev");
    let o = export(std::slice::from_ref(&trace), &out, &["-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(part_files(&out), ["rank=7"]);
    let rows = rows_of_dataset(&out);
    let (doc, _, _) = crate::common::report(std::slice::from_ref(&trace), &["-q"]);
    assert_eq!(device_totals_of_rows(&rows), device_totals_of_report(&doc));
    // The same rows as the file exported under its own name.
    let plain = dir.path().join("plain");
    let o = export(&[data("hand.1000.0.json")], &plain, &["-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let strip = |rows: Vec<Row>| -> Vec<Row> {
        rows.into_iter()
            .map(|mut r| {
                r.remove("rank");
                r
            })
            .collect()
    };
    assert_eq!(strip(rows), strip(rows_of_dataset(&plain)));
}

fn part_files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_rerun_completes_only_the_incomplete_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ev");
    let files = gen_files();
    let o = export(&files, &out, &[]);
    assert!(o.status.success());
    let before = rows_of_dataset(&out);
    let modified = |r: u32| {
        std::fs::metadata(out.join(format!("rank={r}/part-00000.parquet")))
            .unwrap()
            .modified()
            .unwrap()
    };
    let (m0, m2) = (modified(0), modified(2));
    // Rank 1 as a killed run leaves it: a part renamed, a half-written
    // one under its temporary name (of a process that no longer runs),
    // no marker.
    let r1 = out.join("rank=1");
    std::fs::remove_file(r1.join("_SUCCESS")).unwrap();
    std::fs::write(r1.join("part-00003.parquet"), b"stale part of a killed run").unwrap();
    std::fs::write(r1.join("part-00000.parquet"), b"PAR1 cut").unwrap();
    let o = export(&files, &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("of 1 rank written, 2 ranks already complete"),
        "{stdout}"
    );
    assert_eq!(part_files(&r1), vec!["_SUCCESS", "part-00000.parquet"]);
    assert_eq!(
        (modified(0), modified(2)),
        (m0, m2),
        "complete ranks rewritten"
    );
    assert_eq!(rows_of_dataset(&out), before);

    // A changed input is redone even though its marker exists.
    // (A copy with the original's size and time counts as the same input.)
    let copy = dir.path().join("python.100020.0.json");
    std::fs::copy(&files[0], &copy).unwrap();
    let original_time = std::fs::metadata(&files[0]).unwrap().modified().unwrap();
    std::fs::File::options()
        .write(true)
        .open(&copy)
        .unwrap()
        .set_modified(original_time)
        .unwrap();
    let o = export(std::slice::from_ref(&copy), &out, &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 rank already complete"));
    let mut text = std::fs::read(&copy).unwrap();
    text.extend_from_slice(b"\n");
    std::fs::write(&copy, text).unwrap();
    let o = export(std::slice::from_ref(&copy), &out, &[]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("of 1 rank written"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // So is an input rewritten to the same size (a rerun of the
    // application): the marker keys on the modification time too.
    let o = export(std::slice::from_ref(&copy), &out, &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 rank already complete"));
    let text = std::fs::read(&copy).unwrap();
    std::fs::write(&copy, &text).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&copy)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let o = export(&[copy], &out, &[]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("of 1 rank written"),
        "same size, new time: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// Names starting with `.` in `dir` (a run's staging folders).
fn hidden_entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn bad_input_is_one_line_and_leaves_no_partition() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("app.1.0.json");
    std::fs::write(
        &bad,
        "{\"traceEvents\":[\n{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": 1, \"pid\": 1, \"tid\": 1},\n{\"ph\": \"X\",, }\n]}\n",
    )
    .unwrap();
    let out = dir.path().join("ev");
    let o = export(std::slice::from_ref(&bad), &out, &[]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("tracestat: {}:3: ", bad.display())),
        "{stderr}"
    );
    // Nothing under a final name: no marker, no part; and the run, which
    // created DIR and completed nothing, leaves no empty DIR, nor a
    // staging folder beside it.
    let leftovers: Vec<_> = walk(&out);
    assert!(
        leftovers
            .iter()
            .all(|p| !p.ends_with("_SUCCESS") && !p.ends_with(".parquet")),
        "{leftovers:?}"
    );
    assert!(!out.exists(), "a failed run left {}", out.display());
    assert_eq!(hidden_entries(dir.path()), Vec::<String>::new());
    // Nor the missing parents it created for DIR.
    let deep = dir.path().join("no/such/ev");
    let o = export(std::slice::from_ref(&bad), &deep, &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        !dir.path().join("no").exists(),
        "a failed run left its parents"
    );
    // An events directory that is a file is refused.
    let o = export(&[data("hand.1000.0.json")], &bad, &[]);
    assert_eq!(o.status.code(), Some(1));
}

fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p.display().to_string());
            }
        }
    }
    out
}

#[test]
fn events_combine_with_the_report_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ev");
    let json = dir.path().join("r.json");
    let mut args: Vec<&std::ffi::OsStr> = vec![];
    let files = gen_files();
    args.extend(files.iter().map(|p| p.as_os_str()));
    args.extend(["--events".as_ref(), out.as_os_str()]);
    args.extend(["--json".as_ref(), json.as_os_str(), "-q".as_ref()]);
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(json.is_file());
    assert_eq!(part_files(&out).len(), 3);
}

/// `--parquet DIR` is a report output like `--csv`: with `--events` it
/// asks for the report too (it used to be skipped silently, `--events`
/// alone being the dataset-only fast path).
#[test]
fn events_with_parquet_tables_writes_both() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ev");
    let tables = dir.path().join("tables");
    let files = gen_files();
    let o = export(&files, &out, &["--parquet", tables.to_str().unwrap(), "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(part_files(&out).len(), 3);
    for table in ["breakdown", "kernels", "heatmap"] {
        let bytes = std::fs::read(tables.join(format!("{table}.parquet")))
            .unwrap_or_else(|e| panic!("{table}.parquet: {e}"));
        assert!(bytes.starts_with(b"PAR1"), "{table}.parquet");
    }
}

// ---- docs/sql.md against tracestat's tables (DuckDB) ----

/// The queries of docs/sql.md: `(name, sql)` for every block marked
/// `<!-- query: NAME -->`.
pub fn doc_queries() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/sql.md"))
        .unwrap();
    let mut out = Vec::new();
    let mut rest = doc.as_str();
    while let Some(at) = rest.find("<!-- query: ") {
        rest = &rest[at + "<!-- query: ".len()..];
        let end = rest.find(" -->").unwrap();
        let name = rest[..end].to_string();
        let open = rest.find("```sql\n").unwrap() + "```sql\n".len();
        let close = open + rest[open..].find("```").unwrap();
        out.push((name, rest[open..close].to_string()));
        rest = &rest[close..];
    }
    out
}

pub const DUCKDB_RUNNER: &str = r#"
import json, sys
try:
    import duckdb
except ImportError:
    sys.stderr.write("the Python package duckdb is missing: pip install --user duckdb (scripts/test.sh does it)\n")
    sys.exit(3)
queries = json.load(open(sys.argv[1]))
con = duckdb.connect()
out = {}
for name, sql in queries:
    rel = con.sql(sql)
    if rel is None:
        continue
    cols = rel.columns
    out[name] = [dict(zip(cols, row)) for row in rel.fetchall()]
json.dump(out, sys.stdout)
"#;

fn csv_table(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let head = r.headers().unwrap().clone();
    r.records()
        .map(|rec| {
            head.iter()
                .zip(rec.unwrap().iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Equal at the precision tracestat's CSV prints (`digits` decimals).
fn same(csv: &str, sql: &serde_json::Value, digits: i32, what: &str) {
    let a: f64 = csv.parse().unwrap();
    let b = num(sql);
    assert!(
        (a - b).abs() <= 0.51 * 10f64.powi(-digits),
        "{what}: tracestat {a}, SQL {b}"
    );
}

#[test]
fn sql_queries_of_the_docs_reproduce_tracestat_tables() {
    let dir = tempfile::tempdir().unwrap();
    let (out, csv_dir) = (dir.path().join("ev"), dir.path().join("csv"));
    let files = gen_files();
    // The queries read the clocks as written: compare with tracestat's
    // numbers on the same clocks (docs/sql.md).
    let o = export(
        &files,
        &out,
        &["--csv", csv_dir.to_str().unwrap(), "-q", "--align", "none"],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let dataset = format!("{}/", out.display());
    let queries: Vec<(String, String)> = doc_queries()
        .into_iter()
        .map(|(n, q)| (n, q.replace("DIR/", &dataset)))
        .collect();
    let names: Vec<&str> = queries.iter().map(|q| q.0.as_str()).collect();
    assert_eq!(
        names,
        ["view", "top_kernels", "busy", "idle_gaps", "collectives"]
    );
    let qfile = dir.path().join("queries.json");
    std::fs::write(&qfile, serde_json::to_vec(&queries).unwrap()).unwrap();
    let py = Command::new("python3")
        .args(["-c", DUCKDB_RUNNER])
        .arg(&qfile)
        .output()
        .expect("python3 is needed to run the DuckDB queries of docs/sql.md");
    assert!(
        py.status.success(),
        "DuckDB queries failed (install with `pip install --user duckdb`; scripts/test.sh does it):\n{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let res: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();

    // Top kernels: every row equals kernels.csv's row, and the 20 are
    // kernels.csv's 20 largest totals.
    let kernels = csv_table(&csv_dir.join("kernels.csv"));
    let top = res["top_kernels"].as_array().unwrap();
    assert_eq!(top.len(), 20.min(kernels.len()));
    for row in top {
        let cat = row["category"].as_str().unwrap();
        let name = row["kernel"].as_str().unwrap();
        let k = kernels
            .iter()
            .find(|k| k["category"] == cat && k["kernel"] == name)
            .unwrap_or_else(|| panic!("{cat} {name} not in kernels.csv"));
        assert_eq!(k["count"], row["count"].to_string(), "{name}");
        same(&k["total_us"], &row["total_us"], 3, name);
        same(&k["mean_us"], &row["mean_us"], 3, name);
        same(&k["max_us"], &row["max_us"], 3, name);
    }
    let mut totals: Vec<f64> = kernels
        .iter()
        .map(|k| k["total_us"].parse().unwrap())
        .collect();
    totals.sort_by(|a, b| b.total_cmp(a));
    let twentieth = totals[top.len() - 1];
    assert!((num(&top[top.len() - 1]["total_us"]) - twentieth).abs() < 0.001);

    // Busy % and idle gaps per rank: breakdown.csv / idle_gaps.csv, device all.
    let breakdown = csv_table(&csv_dir.join("breakdown.csv"));
    let busy = res["busy"].as_array().unwrap();
    assert_eq!(busy.len(), files.len());
    for row in busy {
        let rank = row["rank"].to_string();
        let b = breakdown
            .iter()
            .find(|b| b["rank"] == rank && b["device"] == "all")
            .unwrap();
        same(&b["wall_us"], &row["wall_us"], 3, "wall_us");
        same(&b["busy_us"], &row["busy_us"], 3, "busy_us");
        same(&b["busy_pct"], &row["busy_pct"], 4, "busy_pct");
    }
    let gaps = csv_table(&csv_dir.join("idle_gaps.csv"));
    let sql_gaps = res["idle_gaps"].as_array().unwrap();
    assert_eq!(sql_gaps.len(), files.len());
    for row in sql_gaps {
        let rank = row["rank"].to_string();
        let g = gaps
            .iter()
            .find(|g| g["rank"] == rank && g["device"] == "all")
            .unwrap();
        assert_eq!(g["gaps"], row["gaps"].to_string());
        assert!(row["gaps"].as_u64().unwrap() > 10);
        same(&g["total_us"], &row["total_us"], 3, "gap total_us");
        same(&g["longest_us"], &row["longest_us"], 3, "gap longest_us");
    }

    // Collectives per rank: stragglers.csv's collectives and own_wait_us.
    let stragglers = csv_table(&csv_dir.join("stragglers.csv"));
    let coll = res["collectives"].as_array().unwrap();
    assert!(!coll.is_empty());
    for s in &stragglers {
        let row = coll.iter().find(|c| {
            c["rank"].as_i64().map(|r| r.to_string()).as_deref() == Some(s["rank"].as_str())
        });
        match row {
            Some(row) => {
                assert_eq!(s["collectives"], row["collectives"].to_string());
                same(&s["own_wait_us"], &row["own_wait_us"], 3, "own_wait_us");
            }
            None => assert_eq!(s["collectives"], "0"),
        }
    }
}

#[test]
fn slurm_script_export_mode_writes_and_resumes_the_partitions() {
    let dir = tempfile::tempdir().unwrap();
    let (work, ev) = (dir.path().join("work"), dir.path().join("ev"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/tracestat-slurm.sh");
    let go = || {
        let mut c = Command::new("bash");
        c.arg(&script)
            .args(["--local", "--block", "2", "--events"])
            .arg(&ev)
            .arg(&work)
            .args(gen_files())
            .env("TRACESTAT", env!("CARGO_BIN_EXE_tracestat"));
        c.output().unwrap()
    };
    let o = go();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    // Two array tasks: ranks 0 and 1, then rank 2.
    assert!(stdout.contains("of 2 ranks written"), "{stdout}");
    assert!(stdout.contains("of 1 rank written"), "{stdout}");
    for r in 0..3 {
        assert!(ev.join(format!("rank={r}/_SUCCESS")).is_file());
    }
    // No report in export mode.
    assert!(!work.join("report.json").exists());
    std::fs::remove_file(ev.join("rank=2/_SUCCESS")).unwrap();
    let o = go();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("2 ranks already complete"), "{stdout}");
    assert!(stdout.contains("of 1 rank written"), "{stdout}");
}

/// A trace of one rank with `calls` host calls: long enough that its rows
/// take a good while to write.
fn long_trace(path: &Path, rank: u32, calls: i64) {
    use std::fmt::Write as _;
    let pid = 1000 + rank;
    let mut text = String::from("{ \"traceEvents\":[\n");
    write!(
        text,
        r#"{{"ph": "M", "name": "process_name", "pid": {pid}, "ts": 1700000000000000.000000, "args": {{"name": "RANK {rank} HOST<node0>"}}}}"#
    )
    .unwrap();
    for i in 0..calls {
        write!(
            text,
            ",\n{{\"ph\": \"X\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"zeEventQueryStatus\", \"cat\": \"cpu_op\", \"ts\": {}.000000, \"dur\": 1.000000, \"id\": 0}}",
            1_700_000_000_000_000i64 + 2 * i
        )
        .unwrap();
    }
    text.push_str("\n]\n}\n");
    std::fs::write(path, &text).unwrap();
}

/// Runs `tracestat INPUT --events OUT` until a part of rank 0 is being
/// written in the run's staging folder beside OUT, then sends `signal`;
/// returns the exit status, or `None` when the run finished first (the
/// machine stalled the test that long).
#[cfg(unix)]
fn signal_while_writing(
    input: &Path,
    out: &Path,
    signal: &str,
) -> Option<std::process::ExitStatus> {
    use std::time::{Duration, Instant};
    let parent = out.parent().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_tracestat"))
        .arg(input)
        .arg("--events")
        .arg(out)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let writing = loop {
        let found = hidden_entries(parent)
            .into_iter()
            .any(|staging| !walk(&parent.join(&staging).join("rank=0")).is_empty());
        if found || child.try_wait().unwrap().is_some() {
            break found;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no staging folder appeared"
        );
        std::thread::sleep(Duration::from_millis(2));
    };
    if !writing {
        return None;
    }
    let ok = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let status = child.wait().unwrap();
    (!status.success()).then_some(status)
}

/// Real interruptions while a rank's part is being written: SIGINT and
/// SIGTERM remove the unfinished rank's parts and the staging folder (and
/// DIR, which the run created and left empty); after a SIGKILL, which
/// cannot be caught, the next run removes the staging folder it left and
/// completes the rank (docs/robustness.md#datasets). The single pass writes
/// parts only once the whole file is read (docs/tracestat.md#events), so
/// the trace is made long enough (400,000 calls) that its rows take a
/// while to write; a run the test could not catch writing is tried again.
#[cfg(unix)]
#[test]
fn an_interrupted_export_leaves_no_part_and_a_rerun_completes_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("app.1000.0.json");
    let calls = 400_000;
    long_trace(&input, 0, calls);
    let out = dir.path().join("ev");
    let rank0 = out.join("rank=0");
    for (signal, code) in [("-INT", 130), ("-TERM", 143), ("-KILL", -1)] {
        let status = (0..5)
            .find_map(|_| {
                let _ = std::fs::remove_dir_all(&out);
                signal_while_writing(&input, &out, signal)
            })
            .unwrap_or_else(|| panic!("{signal}: no export was caught writing its part"));
        if code > 0 {
            assert_eq!(status.code(), Some(code), "{signal}");
            // Nothing left: no rank, no staging folder, no empty DIR.
            assert!(!out.exists(), "{signal}: {:?}", walk(&out));
            assert_eq!(hidden_entries(dir.path()), Vec::<String>::new(), "{signal}");
        } else {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(9));
            // What SIGKILL leaves: the staging folder, nothing in DIR.
            assert_eq!(hidden_entries(dir.path()).len(), 1);
            assert!(!rank0.exists());
        }
    }
    // The re-run removes what the killed run left and completes the rank.
    let o = export(std::slice::from_ref(&input), &out, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(hidden_entries(dir.path()), Vec::<String>::new());
    assert_eq!(part_files(&rank0), vec!["_SUCCESS", "part-00000.parquet"]);
    let marker: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rank0.join("_SUCCESS")).unwrap()).unwrap();
    assert_eq!(marker["rows"], calls);
}

/// A reader looking at DIR while ranks are written (and one is redone)
/// sees each rank whole or not at all: every `rank=N` folder it lists
/// that holds a part holds its `_SUCCESS` and all its parts.
#[test]
fn a_reader_never_sees_a_rank_without_its_marker() {
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = Vec::new();
    for rank in 0..3 {
        let p = dir.path().join(format!("app.{}.{rank}.json", 1000 + rank));
        long_trace(&p, rank, 150_000);
        inputs.push(p);
    }
    let out = dir.path().join("ev");
    let done = std::sync::atomic::AtomicBool::new(false);
    let (looks, seen) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let (mut looks, mut seen) = (0u64, 0u64);
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                let Ok(entries) = std::fs::read_dir(&out) else {
                    continue;
                };
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let Ok(files) = std::fs::read_dir(e.path()) else {
                        continue;
                    };
                    let files: Vec<String> = files
                        .flatten()
                        .map(|f| f.file_name().to_string_lossy().into_owned())
                        .collect();
                    looks += 1;
                    if files.iter().any(|f| f.ends_with(".parquet")) {
                        seen += 1;
                        assert!(
                            files.iter().any(|f| f == "_SUCCESS"),
                            "{name} without its marker: {files:?}"
                        );
                        assert!(
                            files.iter().all(|f| !f.contains("unitrace-tmp")),
                            "{name} with a part being written: {files:?}"
                        );
                    }
                    assert!(!name.starts_with('.'), "a hidden entry in DIR: {name}");
                }
            }
            (looks, seen)
        });
        let o = export(&inputs, &out, &[]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // Rank 1 redone over its complete folder: its input rewritten.
        let text = std::fs::read(&inputs[1]).unwrap();
        std::fs::write(&inputs[1], text).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&inputs[1])
            .unwrap()
            .set_modified(later)
            .unwrap();
        let o = export(&inputs, &out, &[]);
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("of 1 rank written"),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        reader.join().unwrap()
    });
    assert!(
        looks > 0 && seen > 0,
        "the reader saw nothing ({looks} looks)"
    );
    for r in 0..3 {
        assert_eq!(
            part_files(&out.join(format!("rank={r}"))),
            vec!["_SUCCESS", "part-00000.parquet"]
        );
    }
}

#[test]
fn schema_categories_are_the_kernel_tables() {
    // Per (category, kernel), the rows add up to kernels.csv made with the
    // same --schema: the category column groups as the report does.
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trace/categories/schema.json");
    let dir = tempfile::tempdir().unwrap();
    let (out, csv_dir) = (dir.path().join("ev"), dir.path().join("csv"));
    let o = export(
        &gen_files(),
        &out,
        &[
            "--schema",
            schema.to_str().unwrap(),
            "--csv",
            csv_dir.to_str().unwrap(),
            "-q",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut sums: BTreeMap<(String, String), (u64, i64)> = BTreeMap::new();
    for r in rows_of_dataset(&out) {
        if let Some(cat) = s(&r, "category") {
            let e = sums.entry((cat, s(&r, "short_name").unwrap())).or_default();
            e.0 += 1;
            e.1 += n(&r, "duration_ns").unwrap();
        }
    }
    let kernels = csv_table(&csv_dir.join("kernels.csv"));
    assert_eq!(sums.len(), kernels.len());
    assert!(sums.keys().any(|k| k.0 == "gemm"), "{:?}", sums.keys());
    assert!(sums.keys().any(|k| k.0 == "device"), "{:?}", sums.keys());
    for k in &kernels {
        let (count, ns) = sums[&(k["category"].clone(), k["kernel"].clone())];
        assert_eq!(k["count"], count.to_string());
        same(
            &k["total_us"],
            &serde_json::json!(ns as f64 / 1000.0),
            3,
            &k["kernel"],
        );
    }
    // The marker names the schema: without it the ranks are redone.
    let o = export(&gen_files(), &out, &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("of 3 ranks written"));
}

#[test]
fn result_dir_and_ranks_select_the_partitions() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/trace/pftrace/resultdir");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ev");
    let o = run(&[
        "--result-dir".as_ref(),
        root.as_os_str(),
        "--ranks".as_ref(),
        "0".as_ref(),
        "2".as_ref(),
        "--events".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(part_files(&out), vec!["rank=0", "rank=2"]);
    let rows = rows_of_dataset(&out);
    // Each rank of this small real trace: 7 memory commands, 25 host calls.
    assert_eq!(rows.len(), 64);
    assert!(rows
        .iter()
        .any(|r| s(r, "kind").as_deref() == Some("memory")));
    assert!(rows.iter().all(|r| matches!(n(r, "rank"), Some(0 | 2))));
}

/// A file cut short is one warning per run, whether the run writes the
/// dataset alone or reads the files again for a report beside it
/// (docs/robustness.md).
#[test]
fn a_cut_file_is_one_warning_with_or_without_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("app.1.0.json");
    let text = std::fs::read_to_string(data("hand.1000.0.json")).unwrap();
    let last = text.rfind("{\"").unwrap();
    std::fs::write(&cut, &text[..last + 10]).unwrap();
    for (i, extra) in [vec![], vec!["--json", "r.json"]].into_iter().enumerate() {
        let extra: Vec<String> = extra
            .iter()
            .map(|e| match *e {
                "r.json" => dir.path().join("r.json").display().to_string(),
                e => e.to_string(),
            })
            .collect();
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let out = dir.path().join(format!("ev{i}"));
        let o = export(
            std::slice::from_ref(&cut),
            &out,
            &[&["-q"][..], &extra].concat(),
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            stderr.matches("cut short").count(),
            1,
            "{extra:?}: {stderr}"
        );
    }
}
