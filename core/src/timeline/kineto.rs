//! The PyTorch profiler's (Kineto's) trace vocabulary
//! (docs/formats.md#kineto-json), for the Chrome `ph` grammar of
//! [`super::chrome_json`]:
//!
//! * device activity: `kernel`, `gpu_memcpy` (the direction from the name),
//!   `gpu_memset`, and the 2022 names `Kernel`, `Memcpy`, `Memset`
//!   (docs/formats.md#kineto-json-events); `cuda_sync` and
//!   `gpu_user_annotation` are rows of the events dataset, not work;
//! * runtime and driver calls: `cuda_runtime` (also HIP calls on ROCm,
//!   docs/formats.md#kineto-json-rocm), `cuda_driver` (`cuLaunchKernel`,
//!   `cuLaunchKernelEx`), `xpu_runtime`, `xpu_driver`
//!   (docs/formats.md#kineto-json-xpu), `Runtime` (2022) and the other back
//!   ends' runtimes;
//! * framework ranges: `cpu_op`, `user_annotation` (`ProfilerStep#N`
//!   among them), `python_function`;
//! * launch links by `correlation` alone: a call that carries one is the
//!   start of a submission link with that id, and the device event with
//!   the same `correlation` is its end; `ac2g` flows are only a drawing aid
//!   (docs/formats.md#kineto-json-flows);
//! * collectives from `record_param_comms` (docs/formats.md#kineto-json-events);
//! * from the envelope: `distributedInfo` (the rank), `deviceProperties`
//!   (device labels) and `baseTimeNanoseconds` (every time is base + `ts`,
//!   docs/formats.md#kineto-json-time), found by [`find_clock_base`] in the
//!   file's head or tail wherever the file writes it.

use std::io::{self, Read};

use rustc_hash::FxHashMap;

use crate::trace::object_members;

use super::chrome_json::{args_str, args_uint, JsonVocabulary, SliceKind, TopLevel};
use super::model::{CollectiveArgs, DeviceOpKind, HostRole, MemoryKind, Ns, RunInfo};
use super::names::NameInfo;

/// Kineto's vocabulary. It remembers, per host thread, the `correlation`
/// of the last launching call, so that an XPU runtime call and the driver
/// call inside it (which share their `correlation`) make one link.
#[derive(Debug, Default, Clone)]
pub struct KinetoVocabulary {
    last_launch: FxHashMap<u64, u64>,
}

/// Device activity categories.
fn device_kind(cat: &[u8], info: &NameInfo) -> Option<DeviceOpKind> {
    Some(match cat {
        b"kernel" | b"Kernel" => DeviceOpKind::Kernel,
        // The direction is in the name (`Memcpy HtoD (Pageable -> Device)`).
        b"gpu_memcpy" | b"Memcpy" => match info.device_kind {
            k @ DeviceOpKind::Copy { .. } => k,
            _ => DeviceOpKind::Copy {
                from: MemoryKind::Unknown,
                to: MemoryKind::Unknown,
            },
        },
        b"gpu_memset" | b"Memset" => DeviceOpKind::Fill,
        _ => return None,
    })
}

/// Runtime and driver API categories (one or two per back end).
const API_CATEGORIES: &[&[u8]] = &[
    b"cuda_runtime",
    b"cuda_driver",
    b"Runtime",
    b"xpu_runtime",
    b"xpu_driver",
    b"collective_comm",
    b"hip_runtime",
    b"privateuse1_runtime",
    b"privateuse1_driver",
    b"mtia_runtime",
];

/// Framework ranges projected onto the device.
const RANGE_CATEGORIES: &[&[u8]] = &[b"cpu_op", b"user_annotation", b"python_function"];

/// `c10d` operations of `record_param_comms` that are not collectives
/// matched across ranks: point-to-point, waits, and the coalescing markers.
const NOT_MATCHED: &[&str] = &[
    "",
    "send",
    "recv",
    "recvAnySource",
    "wait",
    "coalesced",
    "startCoalescing",
    "endCoalescing",
];

impl JsonVocabulary for KinetoVocabulary {
    fn slice_kind(&self, cat: &[u8], info: &NameInfo) -> SliceKind {
        if let Some(kind) = device_kind(cat, info) {
            return SliceKind::Device(kind);
        }
        if API_CATEGORIES.contains(&cat) {
            SliceKind::Host(HostRole::ApiCall)
        } else if RANGE_CATEGORIES.contains(&cat) {
            SliceKind::Host(HostRole::Range)
        } else {
            // `gpu_user_annotation` (a device-side copy of a range),
            // `cuda_sync` (device-side waits, recorded on request), `Trace`,
            // `overhead`, `xpu_sync`, counter ranges: rows, not work.
            SliceKind::Other
        }
    }

    fn device_ids(&self, args: Option<&[u8]>) -> (Option<u64>, Option<u64>) {
        let id = args.and_then(|a| args_uint(a, b"correlation"));
        (id, id)
    }

    fn device_bytes(&self, kind: DeviceOpKind, args: Option<&[u8]>) -> Option<u64> {
        // Kineto's copies carry their size in `args.bytes` (its CUPTI and
        // XPU writers alike), never in the name.
        match kind {
            DeviceOpKind::Copy { .. } => args.and_then(|a| args_uint(a, b"bytes")),
            _ => None,
        }
    }

    fn submission_flow(&self, _cat: &[u8]) -> bool {
        // `ac2g` (and the older `async_gpu`) flows only draw the link that
        // `correlation` already makes: traces without flows (sampled or
        // post-processed ones) link the same way.
        false
    }

    fn launch_link(&mut self, cat: &[u8], tid: u64, args: Option<&[u8]>) -> Option<u64> {
        if cat == b"collective_comm" {
            return None;
        }
        let id = args.and_then(|a| args_uint(a, b"correlation"))?;
        // An XPU runtime call and its driver call share the id: the first
        // of the two on the thread is the link.
        if self.last_launch.insert(tid, id) == Some(id) {
            return None;
        }
        Some(id)
    }

    fn collective(
        &self,
        name: &str,
        _info: &NameInfo,
        args: Option<&[u8]>,
    ) -> Option<CollectiveArgs> {
        if name != "record_param_comms" {
            return None;
        }
        let args = args?;
        let op = args_str(args, b"Collective name")?;
        if NOT_MATCHED.contains(&op.as_str()) {
            return None;
        }
        let nelems = args_uint(args, b"In msg nelems").or_else(|| args_uint(args, b"In msg size"));
        let elem = args_str(args, b"dtype").map_or(0, |t| dtype_bytes(&t));
        let comm = args_str(args, b"Process Group Name")
            .or_else(|| args_str(args, b"Process Group Description"));
        Some(CollectiveArgs {
            bytes: nelems.map(|n| n.saturating_mul(elem.max(1))),
            comm,
            op: Some(op),
            // c10d only enqueues the collective: its arrival is when its
            // kernel starts (docs/tracestat.md#collectives).
            arrival_on_device: true,
        })
    }

    fn top_level(&mut self, key: &[u8], value: &[u8]) -> TopLevel {
        match key {
            b"distributedInfo" => run_info(value).map_or(TopLevel::None, TopLevel::RunInfo),
            b"deviceProperties" => TopLevel::Devices(device_labels(value)),
            b"baseTimeNanoseconds" => {
                parse_clock_base(value).map_or(TopLevel::None, TopLevel::ClockBase)
            }
            _ => TopLevel::None,
        }
    }
}

/// Rank, world size and backend of `distributedInfo`
/// (docs/formats.md#kineto-json-ranks).
fn run_info(value: &[u8]) -> Option<RunInfo> {
    if value.first() != Some(&b'{') {
        return None;
    }
    let mut info = RunInfo::default();
    for (k, _) in object_members(value) {
        match k {
            b"rank" => info.rank = args_uint(value, b"rank").and_then(|r| u32::try_from(r).ok()),
            b"world_size" => {
                info.world_size =
                    args_uint(value, b"world_size").and_then(|r| u32::try_from(r).ok())
            }
            b"backend" => info.backend = args_str(value, b"backend"),
            _ => {}
        }
    }
    Some(info)
}

/// `(device index, label)` of each `deviceProperties` entry: `GPU <id>:
/// <name>` (the index is the `pid` of the device's events).
fn device_labels(value: &[u8]) -> Vec<(u64, String)> {
    let Some(inner) = value
        .trim_ascii()
        .strip_prefix(b"[")
        .and_then(|v| v.strip_suffix(b"]"))
    else {
        return Vec::new();
    };
    let mut labels = Vec::new();
    for object in split_objects(inner) {
        let Some(id) = args_uint(object, b"id") else {
            continue;
        };
        let label = match args_str(object, b"name") {
            Some(name) if !name.is_empty() => format!("GPU {id}: {name}"),
            _ => format!("GPU {id}"),
        };
        labels.push((id, label));
    }
    labels
}

/// The objects of an array's content (string-aware, nesting-aware).
fn split_objects(inner: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let (mut depth, mut in_str, mut esc, mut start) = (0usize, false, false, None);
    for (i, &c) in inner.iter().enumerate() {
        if in_str {
            match c {
                _ if esc => esc = false,
                b'\\' => esc = true,
                b'"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => {
                if depth == 0 && c == b'{' {
                    start = Some(i);
                }
                depth += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    if let Some(s) = start.take() {
                        out.push(&inner[s..=i]);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// `baseTimeNanoseconds`' value: nanoseconds since the Unix epoch.
fn parse_clock_base(value: &[u8]) -> Option<Ns> {
    let v = value.trim_ascii();
    if v.is_empty() || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

const BASE_KEY: &[u8] = b"\"baseTimeNanoseconds\"";

/// The value of the last `"baseTimeNanoseconds": N` member in `bytes`
/// (a file's head or tail; Kineto writes it before its events since 2025,
/// after them before, docs/formats.md#kineto-json-time).
pub fn find_clock_base(bytes: &[u8]) -> Option<Ns> {
    let at = memchr::memmem::rfind(bytes, BASE_KEY)?;
    let rest = bytes[at + BASE_KEY.len()..].trim_ascii_start();
    let rest = rest.strip_prefix(b":")?.trim_ascii_start();
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == rest.len() {
        // Cut off at the end of the window: not a whole number.
        return None;
    }
    parse_clock_base(&rest[..digits])
}

/// `distributedInfo` (docs/formats.md#kineto-json-ranks) from the last
/// `"distributedInfo": {...}` member in `bytes` (a file's head or tail).
pub fn find_run_info(bytes: &[u8]) -> Option<RunInfo> {
    const KEY: &[u8] = b"\"distributedInfo\"";
    let at = memchr::memmem::rfind(bytes, KEY)?;
    let rest = bytes[at + KEY.len()..].trim_ascii_start();
    let rest = rest.strip_prefix(b":")?.trim_ascii_start();
    let object = split_objects(rest).into_iter().next()?;
    // Only the object that starts right here (not a later one).
    if !std::ptr::eq(object.as_ptr(), rest.as_ptr()) {
        return None;
    }
    run_info(object)
}

/// How much of a plain file's end [`file_tail`] reads.
pub const TAIL_BYTES: u64 = 64 << 10;

/// The last [`TAIL_BYTES`] of a plain file, where Kineto writes its
/// envelope's late members (docs/formats.md#kineto-json-envelope).
pub fn file_tail(file: &std::fs::File) -> io::Result<Vec<u8>> {
    use std::io::{Seek, SeekFrom};
    let len = file.metadata()?.len();
    let mut f = file;
    f.seek(SeekFrom::Start(len.saturating_sub(TAIL_BYTES)))?;
    let mut tail = Vec::with_capacity(TAIL_BYTES as usize);
    f.take(TAIL_BYTES).read_to_end(&mut tail)?;
    Ok(tail)
}

/// The last one to two MiB of a stream (a gzip member's content, inflated
/// once more just for this).
pub fn stream_tail(mut src: impl Read) -> io::Result<Vec<u8>> {
    const CHUNK: usize = 1 << 20;
    let mut prev: Vec<u8> = Vec::with_capacity(CHUNK);
    let mut last: Vec<u8> = Vec::with_capacity(CHUNK);
    loop {
        std::mem::swap(&mut prev, &mut last);
        last.clear();
        let n = (&mut src).take(CHUNK as u64).read_to_end(&mut last)?;
        if n < CHUNK {
            break;
        }
    }
    prev.extend_from_slice(&last);
    Ok(prev)
}

/// Bytes per element of a PyTorch dtype name (`Float`, `BFloat16`, ...).
fn dtype_bytes(dtype: &str) -> u64 {
    match dtype {
        "Double" | "Long" | "ComplexFloat" | "UInt64" => 8,
        "Float" | "Int" | "ComplexHalf" | "UInt32" => 4,
        "Half" | "BFloat16" | "Short" | "UInt16" => 2,
        "Byte" | "Char" | "Bool" | "Float8_e4m3fn" | "Float8_e5m2" | "Float8_e4m3fnuz"
        | "Float8_e5m2fnuz" => 1,
        "ComplexDouble" => 16,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::names::NameInfo;
    use MemoryKind::*;

    fn kind(cat: &str, name: &str) -> SliceKind {
        KinetoVocabulary::default().slice_kind(cat.as_bytes(), &NameInfo::of(name))
    }

    #[test]
    fn every_category_of_the_format() {
        let copy = |from, to| SliceKind::Device(DeviceOpKind::Copy { from, to });
        assert_eq!(
            kind("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)"),
            copy(PageableHost, Device)
        );
        assert_eq!(
            kind("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)"),
            copy(Device, PinnedHost)
        );
        // XPU (PTI's letters and words) and ROCm (no pinned/pageable).
        assert_eq!(
            kind("gpu_memcpy", "Memcpy M2D (MEMORY(Unknown) -> DEVICE)"),
            copy(PageableHost, Device)
        );
        assert_eq!(
            kind("gpu_memcpy", "Memcpy D2H (DEVICE -> HOST)"),
            copy(Device, PinnedHost)
        );
        assert_eq!(
            kind("gpu_memcpy", "Memcpy D2S (DEVICE -> SHARED)"),
            copy(Device, Shared)
        );
        assert_eq!(
            kind("gpu_memcpy", "Memcpy HtoD (Host -> Device)"),
            copy(Unknown, Device)
        );
        // 2022 names.
        assert_eq!(
            kind("Memcpy", "Memcpy DtoD (Device -> Device)"),
            copy(Device, Device)
        );
        let fill = SliceKind::Device(DeviceOpKind::Fill);
        assert_eq!(kind("gpu_memset", "Memset (Device)"), fill);
        assert_eq!(kind("gpu_memset", "Memset (0 -> DEVICE)"), fill);
        assert_eq!(kind("Memset", "Memset (Unknown)"), fill);
        let kernel = SliceKind::Device(DeviceOpKind::Kernel);
        assert_eq!(kind("kernel", "Memcpy-looking kernel"), kernel);
        assert_eq!(kind("Kernel", "gemm"), kernel);
        let api = SliceKind::Host(HostRole::ApiCall);
        for (cat, name) in [
            ("cuda_runtime", "cudaLaunchKernel"),
            ("cuda_runtime", "hipLaunchKernel"),
            ("cuda_driver", "cuLaunchKernelEx"),
            ("Runtime", "cudaLaunchKernel"),
            ("xpu_runtime", "urEnqueueKernelLaunch"),
            ("xpu_driver", "zeCommandListAppendLaunchKernel"),
            ("collective_comm", "xccl::allreduce"),
            ("privateuse1_runtime", "x"),
        ] {
            assert_eq!(kind(cat, name), api, "{cat}");
        }
        let range = SliceKind::Host(HostRole::Range);
        for (cat, name) in [
            ("cpu_op", "aten::mm"),
            ("user_annotation", "ProfilerStep#3"),
            ("python_function", "a.py(1): f"),
        ] {
            assert_eq!(kind(cat, name), range, "{cat}");
        }
        for cat in [
            "gpu_user_annotation",
            "cuda_sync",
            "xpu_sync",
            "Trace",
            "overhead",
            "cuda_profiler_range",
            "ac2g",
        ] {
            assert_eq!(kind(cat, "x"), SliceKind::Other, "{cat}");
        }
    }

    #[test]
    fn launch_links_come_from_correlation_not_flows() {
        let mut v = KinetoVocabulary::default();
        assert!(!v.submission_flow(b"ac2g"));
        let args = br#"{"External id": 530, "cbid": 307, "correlation": 1356}"#;
        assert_eq!(v.launch_link(b"cuda_driver", 7, Some(args)), Some(1356));
        assert_eq!(
            v.device_ids(Some(br#"{"stream": 7, "correlation": 1356}"#)),
            (Some(1356), Some(1356))
        );
        // An XPU runtime call and its driver call share the id: one link.
        let a = br#"{"correlation": 9}"#;
        assert_eq!(v.launch_link(b"xpu_runtime", 3, Some(a)), Some(9));
        assert_eq!(v.launch_link(b"xpu_driver", 3, Some(a)), None);
        assert_eq!(v.launch_link(b"xpu_runtime", 4, Some(a)), Some(9));
        assert_eq!(v.launch_link(b"cuda_runtime", 3, Some(b"{}")), None);
        assert_eq!(v.launch_link(b"cuda_runtime", 3, None), None);
    }

    #[test]
    fn record_param_comms_is_the_collective() {
        let v = KinetoVocabulary::default();
        let info = NameInfo::of("record_param_comms");
        let args = br#"{"Collective name": "allreduce", "In msg nelems": 1024, "dtype": "Float", "Process Group Name": "0", "Process Group Description": "default_pg"}"#;
        let c = v
            .collective("record_param_comms", &info, Some(args))
            .unwrap();
        assert_eq!(c.bytes, Some(4096));
        assert_eq!(c.comm.as_deref(), Some("0"));
        assert_eq!(c.op.as_deref(), Some("allreduce"));
        assert!(c.arrival_on_device);
        let bf16 = br#"{"Collective name": "allgather", "In msg nelems": 8, "dtype": "BFloat16", "Process Group Description": "tp"}"#;
        let c = v
            .collective("record_param_comms", &info, Some(bf16))
            .unwrap();
        assert_eq!((c.bytes, c.comm.as_deref()), (Some(16), Some("tp")));
        for op in ["wait", "send", "recv", ""] {
            let a = format!(r#"{{"Collective name": "{op}", "In msg nelems": 8}}"#);
            assert!(v
                .collective("record_param_comms", &info, Some(a.as_bytes()))
                .is_none());
        }
        // Older traces: no collective arguments, nothing to match on.
        assert!(v
            .collective("record_param_comms", &info, Some(br#"{"External id": 5}"#))
            .is_none());
        assert!(v.collective("nccl:all_reduce", &info, Some(args)).is_none());
    }

    #[test]
    fn the_envelope() {
        let mut v = KinetoVocabulary::default();
        let TopLevel::RunInfo(info) = v.top_level(
            b"distributedInfo",
            br#"{"backend": "nccl", "rank": 3, "world_size": 4, "pg_config": [{"ranks": [0, 1]}]}"#,
        ) else {
            panic!("no run info")
        };
        assert_eq!(info.rank, Some(3));
        assert_eq!(info.world_size, Some(4));
        assert_eq!(info.backend.as_deref(), Some("nccl"));
        let TopLevel::RunInfo(info) = v.top_level(b"distributedInfo", br#"{"backend": "nccl"}"#)
        else {
            panic!("no run info")
        };
        assert_eq!(info.rank, None);
        let TopLevel::Devices(d) = v.top_level(
            b"deviceProperties",
            br#"[{"id": 0, "name": "NVIDIA H200", "x": [1, {"y": "}"}]}, {"id": 1, "name": "NVIDIA \"H200\""}, {"name": "no id"}]"#,
        ) else {
            panic!("no devices")
        };
        assert_eq!(
            d,
            [
                (0, "GPU 0: NVIDIA H200".to_string()),
                (1, "GPU 1: NVIDIA \"H200\"".to_string())
            ]
        );
        assert!(matches!(
            v.top_level(b"deviceProperties", b"[]"),
            TopLevel::Devices(d) if d.is_empty()
        ));
        assert!(matches!(
            v.top_level(b"baseTimeNanoseconds", b"1790857026000000000"),
            TopLevel::ClockBase(1_790_857_026_000_000_000)
        ));
        assert!(matches!(
            v.top_level(b"baseTimeNanoseconds", b"\"1\""),
            TopLevel::None
        ));
        assert!(matches!(
            v.top_level(b"traceName", b"\"x\""),
            TopLevel::None
        ));
    }

    #[test]
    fn the_clock_base_at_either_end() {
        let tail = b"], \"traceName\": \"/tmp/x.json\", \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1735632360000000000}\n";
        assert_eq!(find_clock_base(tail), Some(1_735_632_360_000_000_000));
        assert_eq!(find_clock_base(b"\"baseTimeNanoseconds\":12,"), Some(12));
        // A number cut by the end of the window is not taken.
        assert_eq!(find_clock_base(b"\"baseTimeNanoseconds\": 1735"), None);
        assert_eq!(find_clock_base(b"{\"traceEvents\": []}"), None);
        assert_eq!(find_clock_base(b"\"baseTimeNanoseconds\": -1,"), None);
        // A stream: the last bytes, across a read boundary.
        let mut big = vec![b' '; (1 << 20) - 10];
        big.extend_from_slice(tail);
        assert_eq!(
            find_clock_base(&stream_tail(&big[..]).unwrap()),
            Some(1_735_632_360_000_000_000)
        );
        let mut bigger = vec![b' '; 3 << 20];
        bigger.extend_from_slice(tail);
        assert_eq!(
            find_clock_base(&stream_tail(&bigger[..]).unwrap()),
            Some(1_735_632_360_000_000_000)
        );
        assert_eq!(find_clock_base(&stream_tail(&b"{}"[..]).unwrap()), None);
        // distributedInfo at either end.
        let info = find_run_info(b"], \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 2, \"ranks\": \"[0, 1]\"}, \"traceName\": \"x\"}").unwrap();
        assert_eq!(
            (info.rank, info.backend.as_deref()),
            (Some(2), Some("nccl"))
        );
        assert_eq!(
            find_run_info(b"\"distributedInfo\": 3, {\"rank\": 1}"),
            None
        );
        assert_eq!(find_run_info(b"\"distributedInfo\": {\"rank\": 1"), None);
    }
}
