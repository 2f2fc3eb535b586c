//! Names and categories of a file's events, interned: each distinct name is
//! decoded and classified once ([`NameInfo`]), events carry a [`NameId`].
//! Interning goes by the raw bytes as the file holds them (still
//! JSON-escaped), so the usual event costs one hash lookup and no decode.
//!
//! The rules that classify a name by itself (docs/tracestat.md#classification:
//! host ranges, collective calls, synchronisation calls, memory commands)
//! live here, beside the table, so every format and every analysis reads a
//! name the same way.

use rustc_hash::FxHashMap;

/// Where host memory of a copy lives (docs/formats.md#trace-json-events:
/// unitrace's `M` malloc'ed, `H` host USM, `D` device, `S` shared;
/// Kineto's `Pageable`/`Pinned`/`Device`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    Device,
    /// Page-locked (pinned) host memory: a copy engine reads it directly.
    PinnedHost,
    /// Ordinary (pageable) host memory: the driver stages it first.
    PageableHost,
    Shared,
    Unknown,
}

/// What a device command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceOpKind {
    Kernel,
    Copy {
        from: MemoryKind,
        to: MemoryKind,
    },
    Fill,
    /// Barriers, event signals and waits on a queue.
    Barrier,
    /// Device work of an unknown kind.
    Other,
}

impl DeviceOpKind {
    /// A command that moves or fills memory.
    pub fn is_memory(self) -> bool {
        matches!(self, DeviceOpKind::Copy { .. } | DeviceOpKind::Fill)
    }
}

/// An interned event name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NameId(pub u32);

impl NameId {
    /// The name of a device command delivered without details
    /// ([`super::TraceSink::device_details`]), or whose name did not decode.
    pub const NONE: NameId = NameId(u32::MAX);

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An interned category (`cat`); a file has a handful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CatId(pub u32);

/// What the host was doing, for the cause of a device idle gap, in
/// precedence order (docs/tracestat.md#gap-causes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HostKind {
    // The discriminants index per-kind tables of the analyses.
    /// In a oneCCL / MPI / NCCL call (or the framework binding around one).
    Collective,
    /// In a call that waits for the device or an event.
    Sync,
    /// In any other API call or host range.
    Busy,
}

impl HostKind {
    pub const ALL: [HostKind; 3] = [HostKind::Collective, HostKind::Sync, HostKind::Busy];
}

/// What a name says by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NameInfo {
    pub host_kind: HostKind,
    /// A host range by unitrace's rule: the name carries a `::`
    /// (docs/formats.md#trace-json-events).
    pub range: bool,
    /// A collective call matched across ranks.
    pub collective: bool,
    /// What the command is when the name is a device command's.
    pub device_kind: DeviceOpKind,
}

impl NameInfo {
    pub fn of(name: &str) -> NameInfo {
        NameInfo {
            host_kind: host_kind(name),
            range: is_host_range(name),
            collective: is_collective_call(name),
            device_kind: device_op_kind(name),
        }
    }
}

/// The name without the addresses of Python objects in it, or `None` when
/// it has none: the PyTorch profiler names a bound method by its object's
/// repr, `<built-in method run_backward of torch._C._EngineBase object at
/// 0x7f02...>`, whose address differs in every process, so that one method
/// would be a name per rank and per run. It becomes `<built-in method
/// run_backward of torch._C._EngineBase object>` (docs/formats.md#kineto-json-reading).
pub fn without_object_address(name: &str) -> Option<String> {
    const AT: &str = " object at 0x";
    if !name.contains(AT) {
        return None;
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(i) = rest.find(AT) {
        let after = &rest[i + AT.len()..];
        let hex = after.bytes().take_while(u8::is_ascii_hexdigit).count();
        let keep = i + " object".len();
        if hex > 0 && after.as_bytes().get(hex) == Some(&b'>') {
            out.push_str(&rest[..keep]);
            rest = &after[hex..];
        } else {
            out.push_str(&rest[..keep]);
            rest = &rest[keep..];
        }
    }
    out.push_str(rest);
    (out != name).then_some(out)
}

/// The interned names and categories of one file.
#[derive(Default, Debug)]
pub struct Names {
    ids: FxHashMap<Box<[u8]>, u32>,
    /// Names [`without_object_address`] changed, by their new text: the
    /// raw names that differ only by the address get one id.
    by_text: FxHashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
    info: Vec<NameInfo>,
    cats: Vec<Box<str>>,
}

impl Names {
    /// The id of a name known by its raw bytes, if interned already.
    #[inline]
    pub fn lookup(&self, raw: &[u8]) -> Option<NameId> {
        self.ids.get(raw).map(|&i| NameId(i))
    }

    /// The id of a name by its raw bytes; `decode` gives its text the
    /// first time (`None`: the name does not decode, nothing is interned).
    #[inline]
    pub fn intern(
        &mut self,
        raw: &[u8],
        decode: impl FnOnce() -> Option<String>,
    ) -> Option<NameId> {
        if let Some(id) = self.lookup(raw) {
            return Some(id);
        }
        let name = decode()?;
        Some(self.insert(raw, name))
    }

    #[cold]
    fn insert(&mut self, raw: &[u8], name: String) -> NameId {
        let shortened = without_object_address(&name);
        if let Some(&id) = shortened.as_deref().and_then(|n| self.by_text.get(n)) {
            self.ids.insert(raw.into(), id);
            return NameId(id);
        }
        let id = self.names.len() as u32;
        let name = match shortened {
            Some(n) => {
                self.by_text.insert(n.as_str().into(), id);
                n
            }
            None => name,
        };
        self.info.push(NameInfo::of(&name));
        self.names.push(name.into());
        self.ids.insert(raw.into(), id);
        NameId(id)
    }

    /// The id of a name given as text (UTF-8 bytes of `.pftrace` names,
    /// invalid sequences replaced).
    pub fn intern_utf8(&mut self, raw: &[u8]) -> NameId {
        match self.lookup(raw) {
            Some(id) => id,
            None => self.insert(raw, String::from_utf8_lossy(raw).into_owned()),
        }
    }

    pub fn name(&self, id: NameId) -> &str {
        self.names.get(id.index()).map_or("", |n| n)
    }

    pub fn info(&self, id: NameId) -> NameInfo {
        self.info[id.index()]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The id of a category (a short search: a file has a handful).
    pub fn cat(&mut self, cat: &str) -> CatId {
        match self.cats.iter().position(|c| **c == *cat) {
            Some(i) => CatId(i as u32),
            None => {
                self.cats.push(cat.into());
                CatId(self.cats.len() as u32 - 1)
            }
        }
    }

    /// [`Names::cat`] of a category given by its raw bytes (as the file
    /// holds them): found by bytes, validated as text only when new (a
    /// category that is not UTF-8 is `""`, as in [`Names::cat`]).
    #[inline]
    pub fn cat_bytes(&mut self, raw: &[u8]) -> CatId {
        match self.cats.iter().position(|c| c.as_bytes() == raw) {
            Some(i) => CatId(i as u32),
            None => self.cat(std::str::from_utf8(raw).unwrap_or("")),
        }
    }

    pub fn cat_name(&self, id: CatId) -> &str {
        self.cats.get(id.0 as usize).map_or("", |c| c)
    }
}

/// Host calls that block until the device (or an event) is done.
const SYNC_CALLS: &[&str] = &[
    "zeEventHostSynchronize",
    "zeCommandQueueSynchronize",
    "zeCommandListHostSynchronize",
    "zeFenceHostSynchronize",
    "zeEventQueryStatus",
    "zeFenceQueryStatus",
    "clFinish",
    "clWaitForEvents",
    "urQueueFinish",
    "urEventWait",
    "piQueueFinish",
    "piEventsWait",
    "cudaDeviceSynchronize",
    "cudaStreamSynchronize",
    "cudaEventSynchronize",
    "cudaStreamWaitEvent",
    "hipDeviceSynchronize",
    "hipStreamSynchronize",
    "hipEventSynchronize",
];

/// The [`HostKind`] of a host call or range by its name.
pub fn host_kind(name: &str) -> HostKind {
    if name.starts_with("oneCCL::")
        || name.starts_with("MPI::")
        || name.starts_with("MPI_")
        || name.starts_with("nccl:")
        || name.starts_with("c10d::")
        || name.starts_with("xccl::")
        || name == "record_param_comms"
        || name.to_ascii_lowercase().contains("oneccl")
    {
        HostKind::Collective
    } else if SYNC_CALLS.contains(&name) || name.ends_with("Synchronize") {
        HostKind::Sync
    } else {
        HostKind::Busy
    }
}

/// The name without unitrace's launch shape: a trailing `[SIMD32 {..} {..}]`
/// or `[1024]` (bytes of a memory command), and trailing `{..}` groups
/// (docs/formats.md#metric-csv-kernel-name).
pub fn strip_shape(name: &str) -> &str {
    let mut s = name.trim_end();
    loop {
        let before = s.len();
        if s.ends_with(']') {
            if let Some(open) = s.rfind('[') {
                let inner = &s[open + 1..s.len() - 1];
                let shape = inner.starts_with("SIMD")
                    || inner.contains('{')
                    || (!inner.is_empty() && inner.bytes().all(|b| b.is_ascii_digit()));
                if shape && open > 0 {
                    s = s[..open].trim_end();
                }
            }
        }
        if s.ends_with('}') {
            if let Some(open) = s.rfind('{') {
                if open > 0 {
                    s = s[..open].trim_end();
                }
            }
        }
        if s.len() == before {
            return s;
        }
    }
}

/// A host range in the sense of the projection onto the device: ITT tasks,
/// PyTorch ops, oneDNN primitives, oneCCL and MPI calls all carry a `::`
/// (docs/formats.md#trace-json-events); plain API calls do not.
pub fn is_host_range(name: &str) -> bool {
    name.contains("::")
}

/// MPI collectives (with their non-blocking `I` forms), matched across
/// ranks; point-to-point calls are not.
const MPI_COLLECTIVES: &[&str] = &[
    "Allreduce",
    "Bcast",
    "Barrier",
    "Allgather",
    "Allgatherv",
    "Reduce",
    "Reduce_scatter",
    "Reduce_scatter_block",
    "Alltoall",
    "Alltoallv",
    "Alltoallw",
    "Gather",
    "Gatherv",
    "Scatter",
    "Scatterv",
    "Scan",
    "Exscan",
];

/// The collective a host call is, if any: oneCCL API calls
/// (`oneCCL::API::ALLREDUCE_SMALL`) and MPI collectives (`MPI::MPI_Allreduce`),
/// docs/tracestat.md#collectives.
pub fn is_collective_call(name: &str) -> bool {
    if let Some(rest) = name.strip_prefix("oneCCL::API::") {
        return !rest.is_empty();
    }
    let Some(rest) = name
        .strip_prefix("MPI::MPI_")
        .or_else(|| name.strip_prefix("MPI_"))
    else {
        return false;
    };
    if MPI_COLLECTIVES.contains(&rest) {
        return true;
    }
    // Non-blocking forms: `MPI_Iallreduce` is `Allreduce` started early.
    let Some(base) = rest.strip_prefix('I') else {
        return false;
    };
    let mut chars = base.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let base: String = first.to_ascii_uppercase().to_string() + chars.as_str();
    MPI_COLLECTIVES.contains(&base.as_str())
}

/// Device commands that move or fill memory (docs/formats.md#trace-json-events:
/// `zeCommandListAppendMemoryCopy(M2D)[bytes]`, OpenCL `clEnqueue*Buffer`).
pub fn is_memory_command(name: &str) -> bool {
    // Kineto's `Memcpy HtoD (Pageable -> Device)`, `Memset (Device)`
    // (docs/formats.md#kineto-json-events).
    name.starts_with("Memcpy ")
        || name.starts_with("Memset")
        || name.starts_with("zeCommandListAppendMemory")
        || name.starts_with("zeCommandListAppendImageCopy")
        || name.starts_with("zeCommandListAppendPageFault")
        || (name.starts_with("clEnqueue")
            && (name.contains("Buffer") || name.contains("Image") || name.contains("SVMMem")))
}

/// The kind of a device command by unitrace's naming
/// (docs/formats.md#trace-json-events): `...MemoryCopy(M2D)` copies from
/// malloc'ed host memory to the device, `...MemoryFill`, barriers and
/// event commands; anything else is a kernel.
pub fn device_op_kind(name: &str) -> DeviceOpKind {
    if let Some(rest) = name
        .strip_prefix("zeCommandListAppendMemoryCopy")
        .or_else(|| name.strip_prefix("zeCommandListAppendImageCopy"))
    {
        let (from, to) = copy_direction(rest);
        return DeviceOpKind::Copy { from, to };
    }
    if let Some(rest) = name.strip_prefix("Memcpy ") {
        let (from, to) = kineto_copy_direction(rest);
        return DeviceOpKind::Copy { from, to };
    }
    if name.starts_with("Memset") {
        return DeviceOpKind::Fill;
    }
    if name.starts_with("zeCommandListAppendMemoryFill") || name.starts_with("clEnqueueFill") {
        return DeviceOpKind::Fill;
    }
    if name.starts_with("zeCommandListAppendBarrier")
        || name.starts_with("zeCommandListAppendMemoryRangesBarrier")
        || name.starts_with("zeCommandListAppendSignalEvent")
        || name.starts_with("zeCommandListAppendWaitOnEvents")
        || name.starts_with("zeCommandListAppendEventReset")
    {
        return DeviceOpKind::Barrier;
    }
    if is_memory_command(name) && !name.starts_with("zeCommandListAppendMemoryRangesBarrier") {
        let lower = name.to_ascii_lowercase();
        if lower.contains("fill") {
            return DeviceOpKind::Fill;
        }
        return DeviceOpKind::Copy {
            from: MemoryKind::Unknown,
            to: MemoryKind::Unknown,
        };
    }
    DeviceOpKind::Kernel
}

/// `(M2D)`-style direction of a unitrace copy: `M` malloc'ed (pageable)
/// host memory, `H` host USM (pinned), `D` device, `S` shared.
fn copy_direction(rest: &str) -> (MemoryKind, MemoryKind) {
    let kind = |c: u8| match c {
        b'M' => MemoryKind::PageableHost,
        b'H' => MemoryKind::PinnedHost,
        b'D' => MemoryKind::Device,
        b'S' => MemoryKind::Shared,
        _ => MemoryKind::Unknown,
    };
    let b = rest.as_bytes();
    match b {
        [b'(', f, b'2', t, b')', ..] => (kind(*f), kind(*t)),
        _ => (MemoryKind::Unknown, MemoryKind::Unknown),
    }
}

/// The memory kinds of a Kineto copy (docs/formats.md#kineto-json-events):
/// the words in the parentheses — CUDA's `HtoD (Pageable -> Device)`,
/// XPU's `M2D (MEMORY(Unknown) -> DEVICE)` (docs/formats.md#kineto-json-xpu),
/// ROCm's `HtoD (Host -> Device)`, which does not say pinned or pageable
/// (docs/formats.md#kineto-json-rocm) — else the letters of the kind.
fn kineto_copy_direction(rest: &str) -> (MemoryKind, MemoryKind) {
    let word = |s: &str| match s.trim() {
        "Pageable" | "MEMORY(Unknown)" => MemoryKind::PageableHost,
        "Pinned" | "HOST" => MemoryKind::PinnedHost,
        "Device" | "Array" | "Device Static" | "DEVICE" => MemoryKind::Device,
        "Managed" | "Managed Static" | "SHARED" => MemoryKind::Shared,
        _ => MemoryKind::Unknown,
    };
    let (letters, words) = rest.split_once(' ').unwrap_or((rest, ""));
    let inner = words
        .trim()
        .strip_prefix('(')
        .and_then(|w| w.strip_suffix(')'));
    if let Some((a, b)) = inner.and_then(|w| w.split_once("->")) {
        return (word(a), word(b));
    }
    match letters.as_bytes() {
        // XPU's `M2D`: unitrace's letters (docs/formats.md#kineto-json-xpu).
        [_, b'2', _] => copy_direction(&format!("({letters})")),
        [f, b't', b'o', t] => {
            let letter = |c: u8| match c {
                b'H' => MemoryKind::PageableHost,
                b'D' | b'A' => MemoryKind::Device,
                _ => MemoryKind::Unknown,
            };
            (letter(*f), letter(*t))
        }
        _ => (MemoryKind::Unknown, MemoryKind::Unknown),
    }
}

/// `N` of a `ProfilerStep#N` range, the iteration it spans
/// (docs/formats.md#kineto-json-events).
pub fn profiler_step(name: &str) -> Option<u64> {
    let n = name.strip_prefix("ProfilerStep#")?;
    if n.is_empty() || !n.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_object_addresses_are_left_out_of_names() {
        let m = "<built-in method run_backward of torch._C._EngineBase object";
        for (name, want) in [
            (format!("{m} at 0x7f020aff0800>"), Some(format!("{m}>"))),
            (format!("{m} at 0x1>"), Some(format!("{m}>"))),
            // Two in one name, and one that is not an address.
            (
                "<a object at 0xAB> and <b object at 0x12>".to_string(),
                Some("<a object> and <b object>".to_string()),
            ),
            (format!("{m} at 0x7g>"), None),
            (format!("{m} at 0x>"), None),
            (format!("{m} at 0x7f"), None),
            ("<built-in function sleep>".to_string(), None),
            ("gemm_kernel".to_string(), None),
        ] {
            assert_eq!(without_object_address(&name), want, "{name}");
        }
        // Names that differ only by the address are one name; others not.
        let mut names = Names::default();
        let a = names.intern_utf8(format!("{m} at 0x7f02>").as_bytes());
        let b = names.intern_utf8(format!("{m} at 0x7f03>").as_bytes());
        let c = names.intern_utf8(b"<built-in method then of Future object at 0x7f02>");
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(names.name(a), format!("{m}>"));
        assert_eq!(names.lookup(format!("{m} at 0x7f03>").as_bytes()), Some(a));
        assert_eq!(names.len(), 2);
    }

    #[test]
    fn host_kinds_and_collectives() {
        assert_eq!(host_kind("zeEventHostSynchronize"), HostKind::Sync);
        assert_eq!(host_kind("cudaDeviceSynchronize"), HostKind::Sync);
        assert_eq!(
            host_kind("oneCCL::API::ALLREDUCE_SMALL"),
            HostKind::Collective
        );
        assert_eq!(host_kind("MPI::MPI_Waitall"), HostKind::Collective);
        assert_eq!(host_kind("nccl:all_reduce"), HostKind::Collective);
        assert_eq!(
            host_kind("PyTorch::oneccl_bindings_for_pytorch::allreduce"),
            HostKind::Collective
        );
        assert_eq!(host_kind("zeCommandListAppendLaunchKernel"), HostKind::Busy);
        assert_eq!(host_kind("xccl::allreduce"), HostKind::Collective);
        assert_eq!(host_kind("record_param_comms"), HostKind::Collective);
        assert!(is_collective_call("oneCCL::API::ALLREDUCE_SMALL"));
        assert!(is_collective_call("MPI::MPI_Allreduce"));
        assert!(is_collective_call("MPI::MPI_Iallreduce"));
        assert!(!is_collective_call("MPI::MPI_Isend"));
        assert!(!is_collective_call("MPI_I"));
        assert!(!is_collective_call(
            "PyTorch::oneccl_bindings_for_pytorch::allreduce"
        ));
    }

    #[test]
    fn device_kinds_by_unitrace_names() {
        use MemoryKind::*;
        assert_eq!(
            device_op_kind("zeCommandListAppendMemoryCopy(M2D)[16777216]"),
            DeviceOpKind::Copy {
                from: PageableHost,
                to: Device
            }
        );
        assert_eq!(
            device_op_kind("zeCommandListAppendMemoryCopy(D2H)[64]"),
            DeviceOpKind::Copy {
                from: Device,
                to: PinnedHost
            }
        );
        assert_eq!(
            device_op_kind("zeCommandListAppendMemoryFill(D)[1048576]"),
            DeviceOpKind::Fill
        );
        assert_eq!(
            device_op_kind("zeCommandListAppendBarrier"),
            DeviceOpKind::Barrier
        );
        assert_eq!(
            device_op_kind("gemm_kernel[SIMD8 {1; 1; 1} {1; 1; 1}]"),
            DeviceOpKind::Kernel
        );
        assert_eq!(
            device_op_kind("Memcpy DtoH (Device -> Pinned)"),
            DeviceOpKind::Copy {
                from: Device,
                to: PinnedHost
            }
        );
        assert_eq!(device_op_kind("Memset (Device)"), DeviceOpKind::Fill);
        assert_eq!(
            device_op_kind("clEnqueueReadBuffer"),
            DeviceOpKind::Copy {
                from: Unknown,
                to: Unknown
            }
        );
    }

    #[test]
    fn kineto_copies_and_steps() {
        use MemoryKind::*;
        let copy = |n: &str| match device_op_kind(n) {
            DeviceOpKind::Copy { from, to } => (from, to),
            k => panic!("{n}: {k:?}"),
        };
        assert_eq!(
            copy("Memcpy HtoD (Pageable -> Device)"),
            (PageableHost, Device)
        );
        assert_eq!(copy("Memcpy PtoP (Device -> Device)"), (Device, Device));
        assert_eq!(
            copy("Memcpy DtoH (Device -> Managed Static)"),
            (Device, Shared)
        );
        assert_eq!(copy("Memcpy HtoD (Host -> Device)"), (Unknown, Device));
        assert_eq!(
            copy("Memcpy H2M (HOST -> MEMORY(Unknown))"),
            (PinnedHost, PageableHost)
        );
        assert_eq!(copy("Memcpy HtoD"), (PageableHost, Device));
        assert_eq!(copy("Memcpy S2D"), (Shared, Device));
        assert_eq!(copy("Memcpy ?"), (Unknown, Unknown));
        assert_eq!(profiler_step("ProfilerStep#12"), Some(12));
        assert_eq!(profiler_step("ProfilerStep#"), None);
        assert_eq!(profiler_step("ProfilerStep#1a"), None);
        assert_eq!(profiler_step("aten::mm"), None);
    }

    #[test]
    fn interning_decodes_once() {
        let mut names = Names::default();
        let mut decodes = 0;
        for _ in 0..3 {
            let id = names.intern(b"a\\u0062", || {
                decodes += 1;
                Some("ab".to_string())
            });
            assert_eq!(id, Some(NameId(0)));
        }
        assert_eq!(decodes, 1);
        assert_eq!(names.name(NameId(0)), "ab");
        assert_eq!(names.intern(b"bad", || None), None);
        assert_eq!(names.len(), 1);
        assert_eq!(names.cat("gpu_op"), CatId(0));
        assert_eq!(names.cat("cpu_op"), CatId(1));
        assert_eq!(names.cat("gpu_op"), CatId(0));
        assert_eq!(names.cat_name(CatId(1)), "cpu_op");
        assert_eq!(names.cat_bytes(b"cpu_op"), CatId(1));
        assert_eq!(names.cat_bytes(b"os_op"), CatId(2));
        assert_eq!(names.cat_bytes(b"\xff"), CatId(3));
        assert_eq!(names.cat_name(CatId(3)), "");
        assert_eq!(names.cat(""), CatId(3));
    }
}
