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
//!   file's head or tail wherever the file writes it. Both numbers are JSON
//!   integers in range or nothing: a base or rank of another form (a
//!   string, even of digits, a fraction, a negative or too large number,
//!   null) is ignored with one warning per file
//!   (docs/formats.md#kineto-json-reading), never taken as 0 or wrapped.

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
            b"distributedInfo" => TopLevel::RunInfo(run_info(value)),
            b"deviceProperties" => TopLevel::Devices(device_labels(value)),
            b"baseTimeNanoseconds" => match clock_base_of(value) {
                Ok(base) => TopLevel::ClockBase(base),
                Err(problem) => TopLevel::Unusable(problem),
            },
            _ => TopLevel::None,
        }
    }
}

/// Rank, world size and backend of `distributedInfo`
/// (docs/formats.md#kineto-json-ranks); a rank that is no JSON integer
/// from 0 to `u32::MAX`, or a `distributedInfo` that is no object, is
/// [`RunInfo::rank_problem`].
fn run_info(value: &[u8]) -> RunInfo {
    let value = value.trim_ascii();
    let mut info = RunInfo::default();
    if value.first() != Some(&b'{') {
        info.rank_problem = Some(format!(
            "distributedInfo {} is not an object; ignored",
            json_shown(value)
        ));
        return info;
    }
    for (k, span) in object_members(value) {
        match k {
            b"rank" => match rank_of(&value[span.range()]) {
                Ok(r) => info.rank = Some(r),
                Err(problem) => info.rank_problem = Some(problem),
            },
            b"world_size" => {
                info.world_size =
                    args_uint(value, b"world_size").and_then(|r| u32::try_from(r).ok())
            }
            b"backend" => info.backend = args_str(value, b"backend"),
            _ => {}
        }
    }
    info
}

/// `distributedInfo.rank`: a JSON integer from 0 to `u32::MAX`. A string
/// is refused even when it holds digits: PyTorch writes a number, and a
/// reader that took `"1"` would have to guess at `"01"` or `" 1"`.
fn rank_of(value: &[u8]) -> Result<u32, String> {
    let v = value.trim_ascii();
    let digits = !v.is_empty() && v.iter().all(u8::is_ascii_digit);
    match std::str::from_utf8(v).ok().filter(|_| digits) {
        Some(text) => text.parse().map_err(|_| rank_problem(v)),
        None => Err(rank_problem(v)),
    }
}

fn rank_problem(value: &[u8]) -> String {
    format!(
        "distributedInfo.rank {} is not a whole number from 0 to {}; ignored",
        json_shown(value),
        u32::MAX
    )
}

/// A JSON value as a message shows it: its text (at most 40 characters),
/// saying when it is a string; an object or array by its kind.
fn json_shown(value: &[u8]) -> String {
    match value.first() {
        Some(b'{') => "(an object)".to_string(),
        Some(b'[') => "(an array)".to_string(),
        None => "(nothing)".to_string(),
        Some(first) => {
            let text = String::from_utf8_lossy(value);
            let mut shown: String = text.chars().take(40).collect();
            if shown.len() < text.len() {
                shown.push_str("...");
            }
            let kind = if *first == b'"' { " (a string)" } else { "" };
            format!("`{shown}`{kind}")
        }
    }
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

/// `baseTimeNanoseconds`' value: nanoseconds since the Unix epoch, a JSON
/// integer from 0 to `i64::MAX`; anything else is the warning's text.
pub fn clock_base_of(value: &[u8]) -> Result<Ns, String> {
    let v = value.trim_ascii();
    let digits = !v.is_empty() && v.iter().all(u8::is_ascii_digit);
    let base = std::str::from_utf8(v)
        .ok()
        .filter(|_| digits)
        .and_then(|t| t.parse().ok());
    base.ok_or_else(|| {
        format!(
            "baseTimeNanoseconds {} is not a whole number of nanoseconds from 0 to {}; \
             ignored: times are read as if the file had none",
            json_shown(v),
            Ns::MAX
        )
    })
}

const BASE_KEY: &[u8] = b"\"baseTimeNanoseconds\"";

/// The value of the last `"baseTimeNanoseconds": N` member in `bytes`
/// (a file's head or tail; Kineto writes it before its events since 2025,
/// after them before, docs/formats.md#kineto-json-time): the base, or why
/// it is unusable; `None` without such a member (or one cut by the end of
/// the window).
pub fn find_clock_base(bytes: &[u8]) -> Option<Result<Ns, String>> {
    let at = memchr::memmem::rfind(bytes, BASE_KEY)?;
    let rest = bytes[at + BASE_KEY.len()..].trim_ascii_start();
    let rest = rest.strip_prefix(b":")?.trim_ascii_start();
    Some(clock_base_of(value_token(rest)?))
}

/// The text of the JSON value `rest` starts with, as far as a message
/// needs it: a whole string, a scalar up to its delimiter, the first byte
/// of an object or array. `None` when the window ends first.
fn value_token(rest: &[u8]) -> Option<&[u8]> {
    match rest.first()? {
        b'"' => {
            let mut escaped = false;
            let end = rest[1..].iter().position(|&c| {
                let end = c == b'"' && !escaped;
                escaped = c == b'\\' && !escaped;
                end
            })?;
            Some(&rest[..end + 2])
        }
        b'{' | b'[' => Some(&rest[..1]),
        _ => {
            let end = rest.iter().position(|c| b",}] \t\r\n".contains(c))?;
            Some(&rest[..end])
        }
    }
}

/// `distributedInfo` (docs/formats.md#kineto-json-ranks) from the last
/// `"distributedInfo": ...` member in `bytes` (a file's head or tail); a
/// member that is no object is one whose [`RunInfo::rank_problem`] says so.
pub fn find_run_info(bytes: &[u8]) -> Option<RunInfo> {
    const KEY: &[u8] = b"\"distributedInfo\"";
    let at = memchr::memmem::rfind(bytes, KEY)?;
    let rest = bytes[at + KEY.len()..].trim_ascii_start();
    let rest = rest.strip_prefix(b":")?.trim_ascii_start();
    if rest.first() != Some(&b'{') {
        return Some(run_info(value_token(rest)?));
    }
    let object = split_objects(rest).into_iter().next()?;
    // Only the object that starts right here (not a later one).
    if !std::ptr::eq(object.as_ptr(), rest.as_ptr()) {
        return None;
    }
    Some(run_info(object))
}

/// What the windows of a Kineto file searched so far (its head, then
/// maybe its tail) say of its envelope's clock base and run information
/// (docs/formats.md#kineto-json-envelope).
#[derive(Debug, Default, Clone)]
pub struct EnvelopeFound {
    pub clock_base: Option<Result<Ns, String>>,
    pub run_info: Option<RunInfo>,
}

impl EnvelopeFound {
    /// Searches one more window for what is still missing.
    pub fn search(&mut self, window: &[u8]) {
        if self.clock_base.is_none() {
            self.clock_base = find_clock_base(window);
        }
        if self.run_info.is_none() {
            self.run_info = find_run_info(window);
        }
    }

    /// The clock base to apply, the run information, and one warning for
    /// each unusable value found.
    pub fn finish(self) -> (Option<Ns>, Option<RunInfo>, Vec<String>) {
        let mut warnings = Vec::new();
        let base = match self.clock_base {
            Some(Ok(base)) => Some(base),
            Some(Err(problem)) => {
                warnings.push(problem);
                None
            }
            None => None,
        };
        if let Some(problem) = self.run_info.as_ref().and_then(|i| i.rank_problem.clone()) {
            warnings.push(problem);
        }
        (base, self.run_info, warnings)
    }
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
            TopLevel::Unusable(p) if p.starts_with("baseTimeNanoseconds `\"1\"` (a string) is not")
        ));
        assert!(matches!(
            v.top_level(b"traceName", b"\"x\""),
            TopLevel::None
        ));
    }

    #[test]
    fn the_clock_base_at_either_end() {
        let tail = b"], \"traceName\": \"/tmp/x.json\", \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1735632360000000000}\n";
        assert_eq!(find_clock_base(tail), Some(Ok(1_735_632_360_000_000_000)));
        assert_eq!(
            find_clock_base(b"\"baseTimeNanoseconds\":12,"),
            Some(Ok(12))
        );
        // A number cut by the end of the window is not taken.
        assert_eq!(find_clock_base(b"\"baseTimeNanoseconds\": 1735"), None);
        assert_eq!(find_clock_base(b"\"baseTimeNanoseconds\": \"17"), None);
        assert_eq!(find_clock_base(b"{\"traceEvents\": []}"), None);
        assert!(matches!(
            find_clock_base(b"\"baseTimeNanoseconds\": -1,"),
            Some(Err(p)) if p.starts_with("baseTimeNanoseconds `-1` is not")
        ));
        // A stream: the last bytes, across a read boundary.
        let mut big = vec![b' '; (1 << 20) - 10];
        big.extend_from_slice(tail);
        assert_eq!(
            find_clock_base(&stream_tail(&big[..]).unwrap()),
            Some(Ok(1_735_632_360_000_000_000))
        );
        let mut bigger = vec![b' '; 3 << 20];
        bigger.extend_from_slice(tail);
        assert_eq!(
            find_clock_base(&stream_tail(&bigger[..]).unwrap()),
            Some(Ok(1_735_632_360_000_000_000))
        );
        assert_eq!(find_clock_base(&stream_tail(&b"{}"[..]).unwrap()), None);
        // distributedInfo at either end.
        let info = find_run_info(b"], \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 2, \"ranks\": \"[0, 1]\"}, \"traceName\": \"x\"}").unwrap();
        assert_eq!(
            (info.rank, info.backend.as_deref()),
            (Some(2), Some("nccl"))
        );
        // A member that is no object is one without a rank, said so.
        let info = find_run_info(b"\"distributedInfo\": 3, {\"rank\": 1}").unwrap();
        assert_eq!(info.rank, None);
        assert_eq!(
            info.rank_problem.as_deref(),
            Some("distributedInfo `3` is not an object; ignored")
        );
        assert_eq!(find_run_info(b"\"distributedInfo\": {\"rank\": 1"), None);
    }

    /// Only a JSON integer in range is a clock base or a rank; every other
    /// form is ignored with the warning's text (docs/formats.md#kineto-json-reading).
    #[test]
    fn unusable_clock_bases_and_ranks_say_why() {
        for (value, shown) in [
            (
                &b"\"1790857026000000000\""[..],
                "`\"1790857026000000000\"` (a string)",
            ),
            (b"-1790857026000000000", "`-1790857026000000000`"),
            (b"1.5", "`1.5`"),
            (b"1e+30", "`1e+30`"),
            (b"18446744073709551615", "`18446744073709551615`"),
            (b"null", "`null`"),
            (b"{}", "(an object)"),
        ] {
            assert_eq!(
                clock_base_of(value),
                Err(format!(
                    "baseTimeNanoseconds {shown} is not a whole number of nanoseconds from 0 \
                     to 9223372036854775807; ignored: times are read as if the file had none"
                ))
            );
        }
        assert_eq!(
            clock_base_of(b" 1790857026000000000 "),
            Ok(1_790_857_026_000_000_000)
        );
        for (value, shown) in [
            (&b"-1"[..], "`-1`"),
            (b"1.5", "`1.5`"),
            (b"1099511627776", "`1099511627776`"),
            (b"null", "`null`"),
            (b"\"1\"", "`\"1\"` (a string)"),
            (b"[1]", "(an array)"),
        ] {
            let mut object = b"{\"backend\": \"nccl\", \"rank\": ".to_vec();
            object.extend_from_slice(value);
            object.extend_from_slice(b", \"world_size\": 4}");
            let info = run_info(&object);
            assert_eq!((info.rank, info.world_size), (None, Some(4)));
            assert_eq!(
                info.rank_problem,
                Some(format!(
                    "distributedInfo.rank {shown} is not a whole number from 0 to 4294967295; ignored"
                ))
            );
            // The same text when found by the search of a file's head.
            let mut head = b"{\"distributedInfo\": ".to_vec();
            head.extend_from_slice(&object);
            head.extend_from_slice(b", \"traceEvents\": [");
            assert_eq!(find_run_info(&head), Some(info));
        }
        assert_eq!(run_info(b"{\"rank\": 4294967295}").rank, Some(u32::MAX));
        // A long string is shortened.
        let long = format!("\"{}\"", "7".repeat(100));
        let p = clock_base_of(long.as_bytes()).unwrap_err();
        assert!(
            p.contains(&format!("`\"{}...` (a string)", "7".repeat(39))),
            "{p}"
        );
    }
}
