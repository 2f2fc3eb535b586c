//! Kineto (PyTorch profiler) traces through the trace source, on snippets
//! of each variant of docs/formats.md#kineto-json: the categories, the
//! clock base before or after the events (plain, gzip, in memory), string
//! and negative pids, launch links from `correlation`, collectives, steps,
//! the rank and the device labels; bad input gives one-line errors.

use std::io::Write;
use std::path::Path;

use unitrace_core::timeline::{
    self, names::profiler_step, DeviceOp, DeviceOpKind, FlowPhase, FlowPoint, HostRole, HostSpan,
    MemoryKind, Names, OtherSpan, RankSlot, RunInfo, TimelineFormat, TraceSink, UNKNOWN_PID,
};

/// `(name, kind, pid, tid, start, end, submission link)`.
type SeenDevice = (String, DeviceOpKind, u64, u64, i64, i64, Option<u64>);
/// `(call, collective, bytes, communicator, arrival on the device)`.
type SeenCollective = (String, Option<String>, Option<u64>, Option<String>, bool);

/// Everything the source delivered, as text.
#[derive(Default, Debug)]
struct Seen {
    device: Vec<SeenDevice>,
    host: Vec<(String, HostRole, u64, i64, i64)>,
    collectives: Vec<SeenCollective>,
    other: Vec<(String, String, u64, i64, i64)>,
    /// `(id, tid, ts, call)` of submission starts; other flow points.
    submissions: Vec<(u64, u64, i64, Option<String>)>,
    other_flows: usize,
    devices: Vec<(u64, String)>,
    run_info: Vec<RunInfo>,
    marks: usize,
    names: Option<Vec<String>>,
}

impl Seen {
    fn name_of(&mut self, names: &Names, id: timeline::NameId) -> String {
        // Flow points carry the call's id: names are resolved at the end.
        let _ = self;
        names.name(id).to_string()
    }
}

impl TraceSink for Seen {
    fn device(&mut self, _: RankSlot, pid: u64, label: &str) {
        self.devices.push((pid, label.to_string()));
    }
    fn run_info(&mut self, info: &RunInfo) {
        self.run_info.push(info.clone());
    }
    fn device_op(&mut self, names: &Names, op: &DeviceOp) -> std::io::Result<()> {
        let name = self.name_of(names, op.name);
        self.device
            .push((name, op.kind, op.pid, op.tid, op.start, op.end, op.flow));
        Ok(())
    }
    fn host_span(&mut self, names: &Names, s: &HostSpan<'_>) -> std::io::Result<()> {
        let name = self.name_of(names, s.name);
        if let Some(c) = s.collective {
            self.collectives.push((
                name.clone(),
                c.op.clone(),
                c.bytes,
                c.comm.clone(),
                c.arrival_on_device,
            ));
        }
        self.host.push((name, s.role, s.tid, s.start, s.end));
        Ok(())
    }
    fn other_span(&mut self, names: &Names, s: &OtherSpan) -> std::io::Result<()> {
        self.other.push((
            names.name(s.name).to_string(),
            names.cat_name(s.cat).to_string(),
            s.pid,
            s.start,
            s.end,
        ));
        Ok(())
    }
    fn flow(&mut self, f: &FlowPoint) {
        if f.submission && f.phase == FlowPhase::Start {
            // Resolved to text by `read` once the names table is known.
            self.submissions
                .push((f.id, f.tid, f.ts, f.call.map(|c| c.0.to_string())));
        } else {
            self.other_flows += 1;
        }
    }
    fn mark(&mut self, _: &timeline::Mark) {
        self.marks += 1;
    }
}

fn read(bytes: &[u8], name: &str) -> (Seen, timeline::TimelineRead) {
    let mut seen = Seen::default();
    let read = timeline::read_bytes(bytes, Path::new(name), &mut seen)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let names: Vec<String> = (0..read.names.len())
        .map(|i| read.names.name(timeline::NameId(i as u32)).to_string())
        .collect();
    for s in &mut seen.submissions {
        if let Some(id) = &s.3 {
            s.3 = Some(names[id.parse::<usize>().unwrap()].clone());
        }
    }
    seen.names = Some(names);
    (seen, read)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// The events of a recent CUDA trace (torch 2.11 wrote these shapes).
const CUDA_EVENTS: &str = r#"
  {"name": "process_name", "ph": "M", "ts": 0.5, "pid": 0, "tid": 0, "args": {"name": "python3"}},
  {"name": "process_labels", "ph": "M", "ts": 0.5, "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
  {"name": "thread_name", "ph": "M", "ts": 0.5, "pid": 0, "tid": 7, "args": {"name": "stream 7 "}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#5", "pid": 300, "tid": 301, "ts": 10.000, "dur": 90.000, "args": {"External id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 300, "tid": 301, "ts": 11.000, "dur": 5.000, "args": {"External id": 2}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 300, "tid": 301, "ts": 12.000, "dur": 2.500, "args": {"External id": 2, "cbid": 211, "correlation": 7}},
  {"ph": "s", "id": 7, "pid": 300, "tid": 301, "ts": 12.000, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 300, "tid": 301, "ts": 20.000, "dur": 8.000, "args": {"External id": 3, "Collective name": "allreduce", "dtype": "Float", "In msg nelems": 256, "Process Group Name": "0", "Process Group Description": "default_pg", "Group size": 4}},
  {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 300, "tid": 301, "ts": 21.000, "dur": 6.000, "args": {"External id": 4}},
  {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 300, "tid": 301, "ts": 22.000, "dur": 3.000, "args": {"cbid": 652, "correlation": 8}},
  {"ph": "X", "cat": "kernel", "name": "void gemm<float>(int)", "pid": 0, "tid": 7, "ts": 15.250, "dur": 4.125, "args": {"queued": 0, "device": 0, "stream": 7, "correlation": 7, "External id": 2}},
  {"ph": "f", "id": 7, "pid": 0, "tid": 7, "ts": 15.250, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": 26.000, "dur": 30.000, "args": {"device": 0, "stream": 20, "correlation": 8}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 60.000, "dur": 2.000, "args": {"device": 0, "stream": 7, "correlation": 9, "bytes": 64}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 63.000, "dur": 0.001, "args": {"device": 0, "stream": 7, "correlation": 10, "bytes": 64}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 64.000, "dur": 0, "args": {"correlation": 11}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "nccl:all_reduce", "pid": 0, "tid": 20, "ts": 25.999, "dur": 30.002, "args": {"External id": 4}},
  {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 100007, "ts": 70.000, "dur": 1.000, "args": {"stream": 7, "correlation": 12}},
  {"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": -1, "tid": 0, "ts": 80.000, "dur": 3.000},
  {"ph": "X", "cat": "Trace", "ts": 1.000, "dur": 99.000, "pid": "Spans", "tid": "PyTorch Profiler", "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
  {"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", "tid": "Trace PyTorch Profiler", "ts": 1.000},
  {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 100.500}
"#;

const DEVICES: &str = r#"[{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320, "computeMajor": 9}, {"id": 1, "name": "NVIDIA H200"}]"#;
const DIST: &str = r#"{"backend": "nccl", "rank": 2, "world_size": 4, "pg_count": 1}"#;
const BASE: i64 = 1_790_857_026_000_000_000;

/// The base written before the events (Kineto since 2025).
fn base_first() -> String {
    format!(
        "\n  {{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": {DEVICES},\n  \"distributedInfo\": {DIST},\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {BASE},\n  \"traceEvents\": [{CUDA_EVENTS}],\n  \"traceName\": \"/tmp/x.pt.trace.json\"\n}}"
    )
}

/// The base written after the events (Kineto before 2025), with `padding`
/// blanks among the events so that the head does not reach it.
fn base_last(padding: usize) -> String {
    let pad = " ".repeat(padding);
    format!(
        "\n  {{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": {DEVICES},\n  \"distributedInfo\": {DIST},\n  \"traceEvents\": [{pad}{CUDA_EVENTS}],\n  \"traceName\": \"/tmp/x.pt.trace.json\",\n  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": {BASE}}}\n"
    )
}

#[test]
fn a_cuda_trace_in_the_timeline_model() {
    let (s, r) = read(base_first().as_bytes(), "rank2.pt.trace.json");
    assert_eq!(r.format, TimelineFormat::KinetoJson);
    assert_eq!(r.router.rank(0), Some(2));
    assert_eq!(s.run_info[0].world_size, Some(4));
    assert_eq!(
        s.devices,
        [
            (0, "GPU 0: NVIDIA H200".to_string()),
            (1, "GPU 1: NVIDIA H200".to_string())
        ]
    );
    // Times are base + ts, ts in µs with ns decimals.
    let t = |us_ns: i64| BASE + us_ns;
    let kernel = DeviceOpKind::Kernel;
    let pageable = DeviceOpKind::Copy {
        from: MemoryKind::PageableHost,
        to: MemoryKind::Device,
    };
    let dev: Vec<_> = s
        .device
        .iter()
        .map(|d| (d.0.as_str(), d.1, d.2, d.3, d.4, d.5, d.6))
        .collect();
    assert_eq!(
        dev,
        [
            (
                "void gemm<float>(int)",
                kernel,
                0,
                7,
                t(15_250),
                t(19_375),
                Some(7)
            ),
            (
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                kernel,
                0,
                20,
                t(26_000),
                t(56_000),
                Some(8)
            ),
            (
                "Memcpy HtoD (Pageable -> Device)",
                pageable,
                0,
                7,
                t(60_000),
                t(62_000),
                Some(9)
            ),
            (
                "Memset (Device)",
                DeviceOpKind::Fill,
                0,
                7,
                t(63_000),
                t(63_001),
                Some(10)
            ),
        ]
    );
    let host: Vec<_> = s
        .host
        .iter()
        .map(|h| (h.0.as_str(), h.1, h.3 - BASE, h.4 - BASE))
        .collect();
    use HostRole::*;
    assert_eq!(
        host,
        [
            ("ProfilerStep#5", Range, 10_000, 100_000),
            ("aten::mm", Range, 11_000, 16_000),
            ("cudaLaunchKernel", ApiCall, 12_000, 14_500),
            ("record_param_comms", Range, 20_000, 28_000),
            ("nccl:all_reduce", Range, 21_000, 27_000),
            ("cuLaunchKernelEx", ApiCall, 22_000, 25_000),
        ]
    );
    assert_eq!(profiler_step(&s.host[0].0), Some(5));
    // Launch links: the calls by their correlation; the ac2g flow points
    // are drawing aids only.
    assert_eq!(
        s.submissions,
        [
            (7, 301, t(12_000), Some("cudaLaunchKernel".to_string())),
            (8, 301, t(22_000), Some("cuLaunchKernelEx".to_string())),
        ]
    );
    assert_eq!(s.other_flows, 2);
    assert_eq!(
        s.collectives,
        [(
            "record_param_comms".to_string(),
            Some("allreduce".to_string()),
            Some(1024),
            Some("0".to_string()),
            true
        )]
    );
    // Rows that are not work; the `-1` pid is no process of the file.
    let other: Vec<_> = s
        .other
        .iter()
        .map(|o| (o.0.as_str(), o.1.as_str(), o.2))
        .collect();
    assert_eq!(
        other,
        [
            ("nccl:all_reduce", "gpu_user_annotation", 0),
            ("Stream Sync", "cuda_sync", 0),
            ("Activity Buffer Request", "overhead", UNKNOWN_PID),
        ]
    );
    // The `Trace` span (string tid), two instants and two flow points.
    assert_eq!(s.marks, 3);
}

#[test]
fn the_clock_base_after_the_events_is_found_in_every_form() {
    let (first, _) = read(base_first().as_bytes(), "a.json");
    let dir = tempfile::tempdir().unwrap();
    // 200 KB of blanks: the head (64 KiB) does not reach the base.
    let late = base_last(200_000);
    let plain = dir.path().join("late.json");
    std::fs::write(&plain, &late).unwrap();
    let gz = dir.path().join("late.json.gz");
    std::fs::write(&gz, gzip(late.as_bytes())).unwrap();
    let small = dir.path().join("small.json");
    std::fs::write(&small, base_last(0)).unwrap();
    for path in [&plain, &gz, &small] {
        let mut seen = Seen::default();
        let r = timeline::read_file(path, &mut seen).unwrap();
        assert_eq!(r.format, TimelineFormat::KinetoJson);
        assert_eq!(seen.device, first.device, "{}", path.display());
        assert_eq!(seen.host, first.host, "{}", path.display());
        assert_eq!(r.gzipped, path == &gz);
        let opened = timeline::open(path).unwrap();
        assert_eq!(opened.clock_base, Some(BASE));
    }
    let (in_memory, _) = read(&gzip(late.as_bytes()), "late");
    assert_eq!(in_memory.device, first.device);
    // Without a base, `ts` is µs since the epoch.
    let none = base_first().replace(&format!("\"baseTimeNanoseconds\": {BASE},"), "");
    let (s, _) = read(none.as_bytes(), "none.json");
    assert_eq!(s.device[0].4, 15_250);
}

#[test]
fn the_2022_variant_links_by_correlation_without_flows() {
    // `Kernel`/`Runtime`, `external id` in lower case, integer µs, no
    // envelope but `distributedInfo`, no flows (sampled).
    let text = r#"{"distributedInfo": {"rank": 1}, "traceEvents": [
{"ph": "X", "cat": "Operator", "name": "aten::add", "pid": 5, "tid": 5, "ts": 1661938466265584, "dur": 20, "args": {"external id": 3}},
{"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 5, "tid": 5, "ts": 1661938466265590, "dur": 4, "args": {"external id": 3, "correlation": 44}},
{"ph": "X", "cat": "Kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 1661938466265600, "dur": 3, "args": {"stream": 7, "correlation": 44, "external id": 3}},
{"ph": "X", "cat": "Memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7, "ts": 1661938466265610, "dur": 2, "args": {"correlation": 45}},
{"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1661938466265615, "dur": 1, "args": {"correlation": 46}}
]}"#;
    let (s, r) = read(text.as_bytes(), "inference_rank_1.json");
    assert_eq!(r.format, TimelineFormat::KinetoJson);
    assert_eq!(r.router.rank(0), Some(1));
    assert_eq!(s.device.len(), 3);
    assert_eq!(s.device[0].4, 1_661_938_466_265_600_000);
    assert_eq!(
        s.device[1].1,
        DeviceOpKind::Copy {
            from: MemoryKind::Device,
            to: MemoryKind::PageableHost
        }
    );
    assert_eq!(s.submissions[0].0, 44);
    assert_eq!(s.submissions[0].3.as_deref(), Some("cudaLaunchKernel"));
}

#[test]
fn xpu_and_rocm_calls_link_once() {
    // XPU: a SYCL runtime call and its Level Zero call share the
    // correlation (docs/formats.md#kineto-json-xpu); kernels on a SYCL
    // queue id; PTI's copy names.
    let xpu = r#"{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Intel(R) Data Center GPU Max 1550", "maxComputeUnits": 448}], "traceEvents": [
{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 9, "tid": 9, "ts": 100.000, "dur": 50.000, "args": {"External id": 1}},
{"ph": "X", "cat": "xpu_runtime", "name": "urEnqueueKernelLaunch", "pid": 9, "tid": 9, "ts": 101.000, "dur": 20.000, "args": {"correlation": 77, "External id": 1}},
{"ph": "X", "cat": "xpu_driver", "name": "zeCommandListAppendLaunchKernel", "pid": 9, "tid": 9, "ts": 105.000, "dur": 10.000, "args": {"correlation": 77}},
{"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 3, "ts": 130.000, "dur": 40.000, "args": {"correlation": 77, "External id": 1, "device": 0, "sycl queue": 3, "l0 queue": "0x5555"}},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy M2D (MEMORY(Unknown) -> DEVICE)", "pid": 0, "tid": 3, "ts": 180.000, "dur": 5.000, "args": {"correlation": 78, "bytes": 64}},
{"ph": "X", "cat": "gpu_memset", "name": "Memset (0 -> DEVICE)", "pid": 0, "tid": 3, "ts": 186.000, "dur": 1.000, "args": {"correlation": 79}},
{"ph": "X", "cat": "xpu_sync", "name": "zeEventHostSynchronize", "pid": -1, "tid": 9, "ts": 190.000, "dur": 1.000, "args": {"Type": "HOST_EVENT"}}
]}"#;
    let (s, _) = read(xpu.as_bytes(), "xpu.json");
    assert_eq!(
        s.devices,
        [(0, "GPU 0: Intel(R) Data Center GPU Max 1550".to_string())]
    );
    assert_eq!(s.device.len(), 3);
    assert_eq!(
        s.device[1].1,
        DeviceOpKind::Copy {
            from: MemoryKind::PageableHost,
            to: MemoryKind::Device
        }
    );
    assert_eq!(s.device[2].1, DeviceOpKind::Fill);
    assert_eq!(s.submissions.len(), 1);
    assert_eq!(s.submissions[0].3.as_deref(), Some("urEnqueueKernelLaunch"));
    assert_eq!(s.other[0].1, "xpu_sync");
    // ROCm: HIP calls under `cuda_runtime` with a hex-string stream.
    let rocm = r#"
{"schemaVersion": 1, "traceEvents": [
{"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 4, "tid": 4, "ts": 1.5, "dur": 2.0, "args": {"cid": 1, "correlation": 12, "stream": "0x0", "kernel": "k"}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 2, "tid": 0, "ts": 4.0, "dur": 1.0, "args": {"stream": 0, "correlation": 12}},
{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Host -> Device)", "pid": 2, "tid": 0, "ts": 6.0, "dur": 1.0, "args": {"correlation": 13}}
], "baseTimeNanoseconds": 1000000000}"#;
    let (s, _) = read(rocm.as_bytes(), "rocm.json");
    assert_eq!(s.device[0].4, 1_000_004_000);
    assert_eq!(s.submissions[0].0, 12);
    assert_eq!(
        s.device[1].1,
        DeviceOpKind::Copy {
            from: MemoryKind::Unknown,
            to: MemoryKind::Device
        }
    );
}

#[test]
fn the_one_line_dumps_form_reads_like_the_indented_one() {
    // HTA's sampled traces: one line, `json.dumps` separators, no flows.
    let compact: String = base_first()
        .lines()
        .map(str::trim)
        .filter(|l| !l.contains("\"ph\": \"s\"") && !l.contains("\"ph\": \"f\""))
        .collect::<Vec<_>>()
        .join(" ");
    let (a, _) = read(base_first().as_bytes(), "a.json");
    let (b, _) = read(compact.as_bytes(), "b.json");
    assert_eq!(a.device, b.device);
    assert_eq!(a.host, b.host);
    assert_eq!(a.submissions, b.submissions);
    assert_eq!(b.other_flows, 0);
}

#[test]
fn bad_kineto_input_is_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let err = |name: &str, bytes: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let e = timeline::read_file(&p, &mut Seen::default())
            .err()
            .unwrap_or_else(|| panic!("{name} read"))
            .to_string();
        assert!(!e.contains('\n'), "{e}");
        e.strip_prefix(&format!("{}", p.display()))
            .unwrap()
            .to_string()
    };
    // A syntax error inside an event names its line.
    let broken = base_first().replace("\"name\": \"aten::mm\", ", "\"name\": \"aten::mm\" ");
    let e = err("broken.json", broken.as_bytes());
    assert!(e.starts_with(":13: invalid JSON"), "{e}");
    // A gzip member cut in its middle reads as a cut file: the complete
    // events are kept; corrupt data is an error.
    let gz = gzip(base_first().as_bytes());
    let cut = dir.path().join("cut.json.gz");
    std::fs::write(&cut, &gz[..gz.len() * 2 / 3]).unwrap();
    let mut seen = Seen::default();
    let r = timeline::read_file(&cut, &mut seen).unwrap();
    assert!(r.cut.is_some() && !seen.host.is_empty());
    let mut bad = gz.clone();
    let mid = bad.len() / 2;
    bad[mid..mid + 8].copy_from_slice(b"\xff\xff\xff\xff\xff\xff\xff\xff");
    let e = err("corrupt.json.gz", &bad);
    assert!(e.starts_with(": ") && !e.is_empty(), "{e}");
    // gzip of something that is not a trace.
    let e = err("csv.gz", &gzip(b"Kernel, GpuTime\n"));
    assert!(e.starts_with(": not a trace"), "{e}");
    // A Kineto envelope without events.
    let e = err(
        "no_events.json",
        br#"{"schemaVersion": 1, "deviceProperties": []}"#,
    );
    assert_eq!(e, ": not a trace: no traceEvents array");
}
