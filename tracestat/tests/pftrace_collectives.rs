//! Collectives from `.pftrace` match across ranks as from JSON: the
//! communicator and size come from the slice's debug annotations as they
//! come from `args` in JSON (docs/tracestat.md#collectives,
//! docs/formats.md#pftrace-events). One hand-built three-rank trace is
//! written in both formats; the reports and the events rows must agree.

use std::path::{Path, PathBuf};

use unitrace_core::pftrace::{fields, PacketBuilder};

use crate::common::{close, f, report, run};
use crate::events::bytes_free::rows_of_dataset;
use crate::events::{n, s};

/// Epoch of the hand-built traces, in microseconds.
const T0_US: u64 = 1_700_000_000_000_000;

/// How a collective carries its communicator, in both formats.
#[derive(Clone, Copy)]
enum Comm {
    /// ITT metadata list of one string: JSON `["a"]`, `.pftrace` `"a"`.
    IttString(&'static str),
    /// ITT metadata list of one integer: JSON `[3]`, `.pftrace` `3`.
    IttInt(u64),
    /// A plain integer: JSON `5`, `.pftrace` an uint annotation.
    Int(u64),
}

/// A host call: name, thread, start and duration in us, communicator,
/// size (ITT `send_size` list or MPI `ssize`).
struct Call {
    name: &'static str,
    tid: u64,
    start_us: u64,
    dur_us: u64,
    comm: Comm,
    itt_bytes: bool,
    bytes: u64,
}

/// Rank r's calls. Two ALLREDUCE calls of the same size on two
/// communicators, in a different order on rank 1: only the communicator
/// tells which call of rank 1 belongs to which of rank 0.
fn calls(rank: u64) -> Vec<Call> {
    let itt = |start: u64, end: u64, tid, comm| Call {
        name: "oneCCL::API::ALLREDUCE",
        tid,
        start_us: start,
        dur_us: end - start,
        comm,
        itt_bytes: true,
        bytes: 1024,
    };
    let a = |start| itt(start, 300, 7, Comm::IttString("a"));
    let b = |start| itt(start, 260, 8, Comm::IttInt(3));
    let mpi = |start| Call {
        name: "MPI_Allreduce",
        tid: 7,
        start_us: start,
        dur_us: 400 - start,
        comm: Comm::Int(5),
        itt_bytes: false,
        bytes: 64,
    };
    match rank {
        0 => vec![a(100), b(200), mpi(310)],
        1 => vec![b(110), a(230), mpi(350)],
        _ => vec![a(120), b(150), mpi(320)],
    }
}

fn json_trace(rank: u64) -> String {
    let mut events = vec![format!(
        "{{\"ph\": \"X\", \"tid\": 9, \"pid\": 9, \"name\": \"gemm\", \"cat\": \"gpu_op\", \"ts\": {}.000000, \"dur\": 50.000000, \"args\": {{\"id\": \"1\"}}}}",
        T0_US + 10
    )];
    for c in calls(rank) {
        let comm = match c.comm {
            Comm::IttString(v) => format!("[\"{v}\"]"),
            Comm::IttInt(v) => format!("[{v}]"),
            Comm::Int(v) => v.to_string(),
        };
        let size = if c.itt_bytes {
            format!("\"send_size\":[{}]", c.bytes)
        } else {
            format!("\"ssize\": {}", c.bytes)
        };
        events.push(format!(
            "{{\"ph\": \"X\", \"tid\": {}, \"pid\": {}, \"name\": \"{}\", \"cat\": \"cpu_op\", \"ts\": {}.000000, \"dur\": {}.000000, \"args\": {{\"comm\": {comm}, {size}}}}}",
            c.tid,
            100 + rank,
            c.name,
            T0_US + c.start_us,
            c.dur_us
        ));
    }
    format!("{{ \"traceEvents\":[\n{}\n]\n}}\n", events.join(",\n"))
}

fn annotation(name: &str, value: PacketBuilder) -> PacketBuilder {
    value.bytes(fields::DA_NAME, name.as_bytes())
}

fn slice(out: &mut Vec<u8>, track: u64, name: &str, cat: &str, start_us: u64, dur_us: u64) {
    slice_with(out, track, name, cat, start_us, dur_us, Vec::new());
}

fn slice_with(
    out: &mut Vec<u8>,
    track: u64,
    name: &str,
    cat: &str,
    start_us: u64,
    dur_us: u64,
    annotations: Vec<PacketBuilder>,
) {
    let mut begin = PacketBuilder::new();
    for a in annotations {
        begin = begin.message(fields::TE_DEBUG_ANNOTATIONS, a);
    }
    let begin = begin
        .varint(fields::TE_TYPE, 1)
        .varint(fields::TE_TRACK_UUID, track)
        .bytes(fields::TE_CATEGORIES, cat.as_bytes())
        .bytes(fields::TE_NAME, name.as_bytes());
    let ns = |us: u64| (T0_US + us) * 1000;
    for (ts, te) in [
        (ns(start_us), begin),
        (
            ns(start_us + dur_us),
            PacketBuilder::new()
                .varint(fields::TE_TYPE, 2)
                .varint(fields::TE_TRACK_UUID, track),
        ),
    ] {
        out.extend(
            PacketBuilder::new()
                .varint(fields::PACKET_TIMESTAMP, ts)
                .varint(fields::PACKET_SEQUENCE_ID, 2)
                .message(fields::PACKET_TRACK_EVENT, te)
                .record(),
        );
    }
}

fn descriptor(uuid: u64, kind: u32, pid: u64, tid: Option<u64>, name: &str) -> Vec<u8> {
    let mut d = PacketBuilder::new().varint(fields::THD_PID, pid);
    if let Some(t) = tid {
        d = d.varint(fields::THD_TID, t);
    }
    // process_name (6) and thread_name (5) differ in number.
    let name_field = if tid.is_some() {
        fields::THD_NAME
    } else {
        fields::PD_NAME
    };
    d = d.bytes(name_field, name.as_bytes());
    PacketBuilder::new()
        .varint(fields::PACKET_SEQUENCE_ID, 1)
        .message(
            fields::PACKET_TRACK_DESCRIPTOR,
            PacketBuilder::new()
                .varint(fields::TD_UUID, uuid)
                .message(kind, d),
        )
        .record()
}

/// The same events as [`json_trace`], as unitrace's protobuf writer puts
/// them: ITT values as one string, strings quoted (docs/formats.md#pftrace-events).
fn pftrace_trace(rank: u64) -> Vec<u8> {
    let pid = 100 + rank;
    let mut out = Vec::new();
    out.extend(descriptor(1000, fields::TD_PROCESS, pid, None, "HOSTnode"));
    out.extend(descriptor(
        1007,
        fields::TD_THREAD,
        pid,
        Some(7),
        "Thread 7",
    ));
    out.extend(descriptor(
        1008,
        fields::TD_THREAD,
        pid,
        Some(8),
        "Thread 8",
    ));
    out.extend(descriptor(2000, fields::TD_PROCESS, 9, None, "DEVICE<0>"));
    out.extend(descriptor(
        2009,
        fields::TD_THREAD,
        9,
        Some(9),
        "Thread 9 L0 Compute Engine<0,0>",
    ));
    slice_with(
        &mut out,
        2009,
        "gemm",
        "gpu_op",
        10,
        50,
        vec![annotation(
            "id",
            PacketBuilder::new().bytes(fields::DA_STRING, b"1"),
        )],
    );
    for c in calls(rank) {
        let comm = match c.comm {
            Comm::IttString(v) => {
                PacketBuilder::new().bytes(fields::DA_STRING, format!("\"{v}\"").as_bytes())
            }
            Comm::IttInt(v) => {
                PacketBuilder::new().bytes(fields::DA_STRING, v.to_string().as_bytes())
            }
            Comm::Int(v) => PacketBuilder::new().varint(fields::DA_UINT, v),
        };
        let size = if c.itt_bytes {
            annotation(
                "send_size",
                PacketBuilder::new().bytes(fields::DA_STRING, c.bytes.to_string().as_bytes()),
            )
        } else {
            annotation(
                "ssize",
                PacketBuilder::new().varint(fields::DA_UINT, c.bytes),
            )
        };
        slice_with(
            &mut out,
            1000 + c.tid,
            c.name,
            "cpu_op",
            c.start_us,
            c.dur_us,
            vec![annotation("comm", comm), size],
        );
    }
    // A host call without annotations, so that not every slice has them.
    slice(&mut out, 1007, "zeCommandQueueSynchronize", "cpu_op", 60, 5);
    out
}

/// Writes the three ranks in one format; `.json` or `.pftrace`.
fn write_ranks(dir: &Path, ext: &str) -> Vec<PathBuf> {
    (0..3)
        .map(|r| {
            let p = dir.join(format!("app.{}.{r}.{ext}", 100 + r));
            if ext == "json" {
                let mut text = json_trace(r);
                // The same extra host call as the .pftrace form.
                text = text.replacen(
                    "\n]",
                    &format!(",\n{{\"ph\": \"X\", \"tid\": 7, \"pid\": {}, \"name\": \"zeCommandQueueSynchronize\", \"cat\": \"cpu_op\", \"ts\": {}.000000, \"dur\": 5.000000, \"id\": 0}}\n]", 100 + r, T0_US + 60),
                    1,
                );
                std::fs::write(&p, text).unwrap();
            } else {
                std::fs::write(&p, pftrace_trace(r)).unwrap();
            }
            p
        })
        .collect()
}

/// `(rank, start_ns or duration_ns, comm, bytes)` of a collective row of
/// the events dataset.
type CollectiveRow = (i64, Option<i64>, Option<String>, Option<i64>);

fn instance<'a>(doc: &'a serde_json::Value, name: &str, comm: &str) -> &'a serde_json::Value {
    doc["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name && c["comm"] == comm)
        .unwrap_or_else(|| panic!("no instance {name} on {comm}: {}", doc["collectives"]))
}

#[test]
fn pftrace_collectives_match_by_communicator_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = write_ranks(dir.path(), "json");
    let pf = write_ranks(dir.path(), "pftrace");
    let (mut a, _, err_a) = report(&json, &[]);
    let (mut b, _, err_b) = report(&pf, &[]);
    assert!(err_a.is_empty(), "{err_a}");
    assert!(err_b.is_empty(), "{err_b}");

    for doc in [&a, &b] {
        assert_eq!(doc["collectives"].as_array().unwrap().len(), 3, "{doc}");
        // Communicator "a": rank 0 at 100, rank 1 at 230, rank 2 at 120.
        let ia = instance(doc, "oneCCL::API::ALLREDUCE", "a");
        assert_eq!(ia["bytes"], 1024);
        assert_eq!(ia["ranks"], 3);
        assert_eq!(ia["last_rank"], "1");
        close(f(&ia["skew_us"]), 130.0, "skew on a");
        // Since the earliest rank start: the kernels at 10 us.
        close(f(&ia["start_us"]), 90.0, "start on a");
        let waits: Vec<f64> = ia["waits_us"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| f(&w[1]))
            .collect();
        assert_eq!(waits, [130.0, 0.0, 110.0]);
        // Communicator 3 (ITT integer list): 200, 110, 150.
        let ib = instance(doc, "oneCCL::API::ALLREDUCE", "3");
        assert_eq!(ib["last_rank"], "0");
        close(f(&ib["skew_us"]), 90.0, "skew on 3");
        close(f(&ib["start_us"]), 100.0, "start on 3");
        // MPI with an integer communicator and `ssize`: 310, 350, 320.
        let im = instance(doc, "MPI_Allreduce", "5");
        assert_eq!(im["bytes"], 64);
        assert_eq!(im["last_rank"], "1");
        close(f(&im["skew_us"]), 40.0, "skew on 5");
        assert_eq!(doc["collectives_consistent"], 3);
        // Rank 1 arrived last twice, at a (waits 130 + 110) and at 5 (40 +
        // 30); rank 0 once, at 3 (90 + 50). But rank 1 was late at a (after
        // rank 2's 120, at 230) while it waited in 3 for rank 0 (110 to
        // 200): 80 us of each wait at a is passed on to rank 0
        // (docs/tracestat.md#stragglers). Rank 1: 240 - 160 + 70 = 150;
        // rank 0: 140 + 160 = 300.
        let caused = |i: usize| f(&doc["stragglers"][i]["wait_caused_us"]);
        assert_eq!(doc["stragglers"][1]["arrived_last"], 2);
        close(caused(0), 300.0, "wait caused by rank 0");
        close(caused(1), 150.0, "wait caused by rank 1");
        close(caused(2), 0.0, "wait caused by rank 2");
        // Rank 0's is not more than twice rank 1's: no straggler by the
        // arrivals.
        assert!(doc["straggler"].is_null(), "{}", doc["straggler"]);
    }
    // Apart from the file names, the two reports are one.
    for doc in [&mut a, &mut b] {
        for row in doc["breakdown"].as_array_mut().unwrap() {
            row.as_object_mut().unwrap().remove("file");
        }
    }
    for table in [
        "collectives",
        "collective_summary",
        "stragglers",
        "straggler",
    ] {
        assert_eq!(a[table], b[table], "{table}");
    }
    assert_eq!(a, b);

    // The events rows carry the same communicator and size in both formats.
    let (ea, eb) = (dir.path().join("ev-json"), dir.path().join("ev-pf"));
    for (inputs, out) in [(&json, &ea), (&pf, &eb)] {
        let mut args: Vec<&std::ffi::OsStr> = inputs.iter().map(|p| p.as_os_str()).collect();
        args.push("--events".as_ref());
        args.push(out.as_os_str());
        let o = run(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let collective_rows = |dir: &Path| {
        let mut v: Vec<CollectiveRow> = rows_of_dataset(dir)
            .iter()
            .filter(|r| s(r, "kind").as_deref() == Some("collective"))
            .map(|r| {
                (
                    n(r, "rank").unwrap(),
                    n(r, "start_ns"),
                    s(r, "comm"),
                    n(r, "bytes"),
                )
            })
            .collect();
        v.sort();
        v
    };
    let (ra, rb) = (collective_rows(&ea), collective_rows(&eb));
    assert_eq!(ra.len(), 9);
    assert_eq!(ra, rb);
    let comms: std::collections::BTreeSet<_> = ra.iter().map(|r| r.2.clone().unwrap()).collect();
    assert_eq!(comms.into_iter().collect::<Vec<_>>(), ["3", "5", "a"]);
}

#[test]
fn begin_end_collectives_carry_communicator_and_size_into_the_events_rows() {
    // docs/tracestat.md#collectives: a B/E pair may carry its arguments on
    // either event; the report and the events rows read them alike.
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..2u64)
        .map(|r| {
            let ts = |us: u64| format!("{}.000000", T0_US + us);
            let events = [
                format!("{{\"ph\": \"B\", \"tid\": 7, \"pid\": {}, \"name\": \"oneCCL::API::ALLGATHER\", \"cat\": \"cpu_op\", \"ts\": {}, \"args\": {{\"comm\":[\"tp\"]}}}}", 100 + r, ts(100 + 40 * r)),
                format!("{{\"ph\": \"E\", \"tid\": 7, \"pid\": {}, \"name\": \"oneCCL::API::ALLGATHER\", \"cat\": \"cpu_op\", \"ts\": {}, \"args\": {{\"send_size\":[512, 512]}}}}", 100 + r, ts(300)),
            ];
            let p = dir.path().join(format!("app.{}.{r}.json", 100 + r));
            std::fs::write(
                &p,
                format!("{{ \"traceEvents\":[\n{}\n]\n}}\n", events.join(",\n")),
            )
            .unwrap();
            p
        })
        .collect();
    let (doc, _, _) = report(&files, &[]);
    let i = instance(&doc, "oneCCL::API::ALLGATHER", "tp");
    assert_eq!(i["bytes"], 1024);
    assert_eq!(i["last_rank"], "1");
    close(f(&i["skew_us"]), 40.0, "skew");
    let events = dir.path().join("ev");
    let mut args: Vec<&std::ffi::OsStr> = files.iter().map(|p| p.as_os_str()).collect();
    args.extend(["--events".as_ref(), events.as_os_str()]);
    let o = run(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Vec<CollectiveRow> = rows_of_dataset(&events)
        .iter()
        .filter(|r| s(r, "kind").as_deref() == Some("collective"))
        .map(|r| {
            (
                n(r, "rank").unwrap(),
                n(r, "duration_ns"),
                s(r, "comm"),
                n(r, "bytes"),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (0, Some(200_000), Some("tp".to_string()), Some(1024)),
            (1, Some(160_000), Some("tp".to_string()), Some(1024)),
        ]
    );
}

/// A `.pftrace` track event without a timestamp cannot be placed: it is
/// left out as `no timestamp` and said so, as in JSON
/// (docs/tracestat.md#implausible-events).
#[test]
fn a_pftrace_event_without_a_timestamp_is_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut out = descriptor(2000, fields::TD_PROCESS, 9, None, "DEVICE<0>");
    out.extend(descriptor(2009, fields::TD_THREAD, 9, Some(9), "Thread 9"));
    slice(&mut out, 2009, "gemm", "gpu_op", 10, 50);
    out.extend(
        PacketBuilder::new()
            .varint(fields::PACKET_SEQUENCE_ID, 2)
            .message(
                fields::PACKET_TRACK_EVENT,
                PacketBuilder::new()
                    .varint(fields::TE_TYPE, 1)
                    .varint(fields::TE_TRACK_UUID, 2009)
                    .bytes(fields::TE_NAME, b"untimed"),
            )
            .record(),
    );
    let file = dir.path().join("app.1.0.pftrace");
    std::fs::write(&file, out).unwrap();
    let (doc, _, stderr) = report(std::slice::from_ref(&file), &[]);
    let imp = doc["implausible"].as_array().unwrap();
    assert_eq!(imp.len(), 1, "{imp:?}");
    assert_eq!(imp[0]["kind"], "no timestamp");
    assert_eq!(imp[0]["count"], 1);
    assert!(
        stderr.contains("track event without a timestamp"),
        "{stderr}"
    );
    close(f(&doc["breakdown"][0]["busy_us"]), 50.0, "the timed kernel");
}
