//! The report's input step: one streaming pass per file through the trace
//! source (`unitrace_core::timeline`, docs/formats.md#timeline-model) that
//! keeps only the intervals the analyses need (docs/tracestat.md#memory),
//! one [`RankTrace`] per rank the file holds.
//!
//! Events are not in time order in unitrace traces (device events are
//! flushed in batches, an `X` is written when it ends), so everything kept
//! is sorted later by the analyses.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap as FastMap;
use unitrace_core::timeline::{
    self, rank::split_rank_label, DeviceOp, Dropped, FlowPhase, FlowPoint, HostSpan, Mark, NameId,
    Names, OtherSpan, Place, RankSlot, TimelineRead, TraceSink,
};
use unitrace_core::InputError;

use crate::time::Ns;

/// Host calls of one kind closer than this are one stretch of host activity.
pub const HOST_JOIN_NS: Ns = 1_000;

/// One device command.
#[derive(Debug, Clone, Copy)]
pub struct KernelRun {
    pub start: Ns,
    pub end: Ns,
    pub name: NameId,
    pub device: u32,
    /// Device thread (engine/track) id.
    pub tid: u64,
    /// The submission-link id (unitrace's instance id, Kineto's correlation).
    pub flow: Option<u64>,
}

/// One host range (an annotated range: ITT, PyTorch, oneDNN, oneCCL, MPI,
/// Kineto `cpu_op`/`user_annotation`/`python_function`).
#[derive(Debug, Clone, Copy)]
pub struct HostCall {
    pub tid: u64,
    pub start: Ns,
    pub end: Ns,
    pub name: NameId,
}

/// What a set-up call does (docs/findings.md#set-up-calls): builds a
/// module or program (JIT), allocates or frees device or pinned memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SetupKind {
    ModuleBuild,
    Alloc,
    Free,
}

impl SetupKind {
    pub const ALL: [SetupKind; 3] = [SetupKind::ModuleBuild, SetupKind::Alloc, SetupKind::Free];

    pub fn name(self) -> &'static str {
        match self {
            SetupKind::ModuleBuild => "module-build",
            SetupKind::Alloc => "alloc",
            SetupKind::Free => "free",
        }
    }

    /// The kind of a host API call by its name: Level Zero, OpenCL, the
    /// SYCL Unified Runtime, CUDA (runtime, driver, NVRTC) and HIP.
    pub fn of(name: &str) -> Option<SetupKind> {
        const BUILD: &[&str] = &[
            "zeModuleCreate",
            "zeModuleDynamicLink",
            "clBuildProgram",
            "clCompileProgram",
            "clLinkProgram",
            "urProgramBuild",
            "urProgramBuildExp",
            "urProgramCompile",
            "urProgramCompileExp",
            "urProgramLink",
            "urProgramLinkExp",
            "cuModuleLoad",
            "cuModuleLoadData",
            "cuModuleLoadDataEx",
            "cuModuleLoadFatBinary",
            "cuLibraryLoadData",
            "cuLinkComplete",
            "nvrtcCompileProgram",
            "hipModuleLoad",
            "hipModuleLoadData",
            "hipModuleLoadDataEx",
            "hiprtcCompileProgram",
        ];
        const ALLOC: &[&str] = &[
            "zeMemAllocDevice",
            "zeMemAllocShared",
            "zeMemAllocHost",
            "clCreateBuffer",
            "clCreateBufferWithProperties",
            "clSVMAlloc",
            "urUSMDeviceAlloc",
            "urUSMSharedAlloc",
            "urUSMHostAlloc",
            "cudaMalloc",
            "cudaMallocAsync",
            "cudaMallocHost",
            "cudaHostAlloc",
            "cudaMallocManaged",
            "cuMemAlloc",
            "cuMemAllocAsync",
            "cuMemAllocHost",
            "cuMemAllocManaged",
            "hipMalloc",
            "hipMallocAsync",
            "hipHostMalloc",
            "hipMallocManaged",
        ];
        const FREE: &[&str] = &[
            "zeMemFree",
            "zeMemFreeExt",
            "clReleaseMemObject",
            "clSVMFree",
            "urUSMFree",
            "cudaFree",
            "cudaFreeAsync",
            "cudaFreeHost",
            "cuMemFree",
            "cuMemFreeAsync",
            "cuMemFreeHost",
            "hipFree",
            "hipFreeAsync",
            "hipHostFree",
        ];
        // The driver API's versioned entry points (`cuMemAlloc_v2`).
        let base = name.strip_suffix("_v2").unwrap_or(name);
        if BUILD.contains(&base) {
            Some(SetupKind::ModuleBuild)
        } else if ALLOC.contains(&base) {
            Some(SetupKind::Alloc)
        } else if FREE.contains(&base) {
            Some(SetupKind::Free)
        } else {
            None
        }
    }
}

/// One set-up call (module build, allocation, free) of a rank.
#[derive(Debug, Clone, Copy)]
pub struct SetupCall {
    pub kind: SetupKind,
    pub start: Ns,
    pub end: Ns,
    pub name: NameId,
}

/// A collective call of one rank (oneCCL, MPI, PyTorch `record_param_comms`).
#[derive(Debug, Clone)]
pub struct CollectiveCall {
    /// The call's name, or the collective it names (`record_param_comms`).
    pub name: Box<str>,
    pub start: Ns,
    pub end: Ns,
    /// When the rank called it on the host: `start` but for a collective
    /// on the device, whose work may start a step later (a window or a
    /// kept step holds the calls made in it, docs/tracestat.md#windows).
    pub called: Ns,
    pub bytes: Option<u64>,
    pub comm: Option<String>,
    /// The host thread of the call.
    pub tid: u64,
    /// The rank arrives when the device work it launched starts: `start`
    /// and `end` are that work's span (docs/tracestat.md#collectives).
    pub on_device: bool,
}

/// A device (process of device events) of one rank, split per tile when
/// kernels carry the `Tile #<t>: ` prefix of `--separate-tiles`.
#[derive(Debug, Clone)]
pub struct Device {
    pub pid: u64,
    pub tile: Option<u32>,
    pub label: String,
}

/// Events left out because their times cannot be right.
#[derive(Debug, Clone, Default)]
pub struct Implausible {
    /// `(kind, count)` in first-seen order.
    pub counts: Vec<(&'static str, u64)>,
    /// Up to [`MAX_EXAMPLES`] descriptions.
    pub examples: Vec<String>,
}

pub const MAX_EXAMPLES: usize = 3;

impl Implausible {
    pub fn add(&mut self, kind: &'static str, example: impl FnOnce() -> String) {
        match self.counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => self.counts.push((kind, 1)),
        }
        if self.examples.len() < MAX_EXAMPLES {
            self.examples.push(example());
        }
    }
    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| c.1).sum()
    }
}

/// What one rank's trace holds, as kept by the pass.
#[derive(Debug)]
pub struct RankTrace {
    /// From the path, the `RANK <r>` process name or the file's run info
    /// (docs/formats.md#timeline-ranks).
    pub rank: Option<u32>,
    pub input_index: usize,
    pub file: String,
    /// The file's names (shared by its ranks).
    pub names: Arc<Names>,
    pub kernels: Vec<KernelRun>,
    /// Host ranges, for the projection onto the GPU.
    pub host: Vec<HostCall>,
    /// Host API calls (launches, synchronisations, other runtime calls):
    /// the host side of the critical path (docs/tracestat.md#critical-path).
    pub api: Vec<HostCall>,
    /// Where the host was busy, per `HostKind` (index `kind as usize`):
    /// every host call, overlapping neighbours merged as they come (a
    /// parent range is written after its children), for the gap causes.
    pub host_cover: [Vec<(Ns, Ns)>; 3],
    /// Earliest start and latest end of host calls.
    pub host_first: Ns,
    pub host_last: Ns,
    /// `(flow id, host thread, submission time)` of submission flows.
    pub flows: Vec<(u64, u64, Ns)>,
    pub devices: Vec<Device>,
    /// `(device pid, device tid)` of copy engines (thread names).
    pub copy_engines: HashSet<(u64, u64)>,
    /// Thread names by `(pid, tid)`, the first one given, trimmed: what
    /// `--annotate` names an engine's queue depth by, as the raw ids of
    /// one engine differ between a JSON trace and its `.pftrace`
    /// (docs/tracestat.md#annotated-trace).
    pub thread_names: FastMap<(u64, u64), String>,
    /// The size of the copies whose writer gives it apart from the name
    /// (Kineto's `args.bytes`), by `(device, device tid, start)`: few,
    /// beside the kernels rather than in each (docs/findings.md#small-copy).
    pub copy_bytes: FastMap<(u32, u64, Ns), u64>,
    pub collectives: Vec<CollectiveCall>,
    /// Module builds, allocations and frees (few: kept one by one).
    pub setup_calls: Vec<SetupCall>,
    pub implausible: Implausible,
    /// Earliest start and latest end of every kept event.
    pub first: Ns,
    pub last: Ns,
    /// Set when the file was cut (the writer was killed).
    pub truncated: Option<String>,
    /// Line of the first non-blank byte after the trace's closing bracket
    /// (docs/tracestat.md#inputs: ignored with a warning, as mergetrace does).
    pub trailing_data_line: Option<u64>,
    /// The file's other recoverable damage, one warning each per file
    /// ([`unitrace_core::timeline::TimelineRead::warnings`]).
    pub warnings: Vec<String>,
}

impl RankTrace {
    pub fn name(&self, id: NameId) -> &str {
        self.names.name(id)
    }

    pub fn wall(&self) -> Ns {
        if self.last > self.first {
            self.last - self.first
        } else {
            0
        }
    }
}

/// One rank's intervals while the file is read.
#[derive(Default)]
struct RankParts {
    kernels: Vec<KernelRun>,
    host: Vec<HostCall>,
    api: Vec<HostCall>,
    host_cover: [Vec<(Ns, Ns)>; 3],
    host_first: Ns,
    host_last: Ns,
    flows: Vec<(u64, u64, Ns)>,
    devices: Vec<Device>,
    device_ids: FastMap<(u64, Option<u32>), u32>,
    device_labels: FastMap<u64, String>,
    copy_engines: HashSet<(u64, u64)>,
    thread_names: FastMap<(u64, u64), String>,
    copy_bytes: FastMap<(u32, u64, Ns), u64>,
    collectives: Vec<CollectiveCall>,
    setup_calls: Vec<SetupCall>,
    implausible: Implausible,
    first: Ns,
    last: Ns,
    /// Host ranges still open at the end of the file: `(tid, start, name)`.
    unclosed: Vec<(u64, Ns, NameId)>,
    /// Collectives whose arrival is their device work's start: `(index
    /// into collectives, host thread)` (docs/tracestat.md#collectives).
    arrive_on_device: Vec<(usize, u64)>,
}

impl RankParts {
    fn new() -> Self {
        RankParts {
            first: Ns::MAX,
            last: Ns::MIN,
            host_first: Ns::MAX,
            host_last: Ns::MIN,
            ..RankParts::default()
        }
    }

    #[inline]
    fn touch(&mut self, start: Ns, end: Ns) {
        self.first = self.first.min(start);
        self.last = self.last.max(end);
    }

    /// Records a host call or range.
    fn host_call(
        &mut self,
        names: &Names,
        tid: u64,
        start: Ns,
        end: Ns,
        name: NameId,
        range: bool,
    ) {
        let kind = names.info(name).host_kind;
        self.host_first = self.host_first.min(start);
        self.host_last = self.host_last.max(end);
        let cover = &mut self.host_cover[kind as usize];
        match cover.last_mut() {
            // Back-to-back calls (less than HOST_JOIN_NS apart) join: the
            // host spent the sliver between them on the way to the next
            // call, and the list stays short (docs/tracestat.md#gap-causes).
            Some(last) if start <= last.1 + HOST_JOIN_NS && end + HOST_JOIN_NS >= last.0 => {
                last.0 = last.0.min(start);
                last.1 = last.1.max(end);
            }
            _ => cover.push((start, end)),
        }
        let call = HostCall {
            tid,
            start,
            end,
            name,
        };
        if range {
            self.host.push(call);
        } else {
            self.api.push(call);
        }
    }

    fn device_id(&mut self, pid: u64, tile: Option<u32>) -> u32 {
        if let Some(&d) = self.device_ids.get(&(pid, tile)) {
            return d;
        }
        let d = self.devices.len() as u32;
        let base = self
            .device_labels
            .get(&pid)
            .cloned()
            .unwrap_or_else(|| format!("device pid {pid}"));
        let label = match tile {
            Some(t) => format!("{base} tile {t}"),
            None => base,
        };
        self.devices.push(Device { pid, tile, label });
        self.device_ids.insert((pid, tile), d);
        d
    }
}

/// The report's sink for one file (docs/tracestat.md#memory): its ranks'
/// intervals, by rank slot. [`read_trace_file`] reads a file into it;
/// a tool that walks a file's events itself (mergetrace's merge,
/// docs/mergetrace.md#statistics) feeds the trace source's interpreter
/// with this as the sink, then [`FileCollector::finish`]es it into the
/// same [`RankTrace`]s.
pub struct FileCollector {
    /// How reports and warnings name the file.
    file: String,
    ranks: Vec<RankParts>,
    /// The tile of each name (`Tile #<t>: `), looked up once per name.
    tiles: Vec<Option<Option<u32>>>,
    /// The set-up kind of each name, looked up once per name.
    setup_kinds: Vec<Option<Option<SetupKind>>>,
}

impl FileCollector {
    /// An empty collector for the file reports call `file`.
    pub fn new(file: impl Into<String>) -> Self {
        FileCollector {
            file: file.into(),
            ranks: Vec::new(),
            tiles: Vec::new(),
            setup_kinds: Vec::new(),
        }
    }

    /// The sink to hand the trace source's interpreter.
    pub fn sink(&mut self) -> &mut impl TraceSink {
        self
    }

    /// The file's ranks, each closed (open ranges ended, a cut noted),
    /// once the read is over; `read` is what the read found besides the
    /// events (names, ranks, cut), `input_index` the file's position among
    /// the inputs. A file without events is one idle rank.
    pub fn finish(self, read: TimelineRead, input_index: usize) -> Vec<RankTrace> {
        finish(self.ranks, read, &self.file, input_index)
    }

    #[inline]
    fn rank(&mut self, slot: RankSlot) -> &mut RankParts {
        if self.ranks.len() <= slot {
            self.ranks.resize_with(slot + 1, RankParts::new);
        }
        &mut self.ranks[slot]
    }

    fn tile(&mut self, names: &Names, name: NameId) -> Option<u32> {
        let i = name.index();
        if self.tiles.len() <= i {
            self.tiles.resize(i + 1, None);
        }
        *self.tiles[i].get_or_insert_with(|| split_tile(names.name(name)))
    }

    fn setup_kind(&mut self, names: &Names, name: NameId) -> Option<SetupKind> {
        let i = name.index();
        if self.setup_kinds.len() <= i {
            self.setup_kinds.resize(i + 1, None);
        }
        *self.setup_kinds[i].get_or_insert_with(|| SetupKind::of(names.name(name)))
    }
}

impl TraceSink for FileCollector {
    fn device(&mut self, rank: RankSlot, pid: u64, label: &str) {
        self.rank(rank).device_labels.insert(pid, label.to_string());
    }

    fn process(&mut self, rank: RankSlot, pid: u64, label: &str) {
        let (_, rest) = split_rank_label(label);
        if rest.starts_with("DEVICE") || label.contains("DEVICE<") {
            let rest = rest.to_string();
            self.rank(rank).device_labels.insert(pid, rest);
        }
    }

    fn thread(&mut self, rank: RankSlot, pid: u64, tid: u64, label: &str) {
        let r = self.rank(rank);
        if label.contains("Copy Engine") {
            r.copy_engines.insert((pid, tid));
        }
        r.thread_names
            .entry((pid, tid))
            .or_insert_with(|| label.trim().to_string());
    }

    fn device_op(&mut self, names: &Names, op: &DeviceOp) -> std::io::Result<()> {
        if op.name == NameId::NONE {
            // A name that does not decode: the command is left out.
            return Ok(());
        }
        let tile = self.tile(names, op.name);
        let r = self.rank(op.rank);
        let device = r.device_id(op.pid, tile);
        r.touch(op.start, op.end);
        if let Some(b) = op.bytes {
            r.copy_bytes.insert((device, op.tid, op.start), b);
        }
        r.kernels.push(KernelRun {
            start: op.start,
            end: op.end,
            name: op.name,
            device,
            tid: op.tid,
            flow: op.flow,
        });
        Ok(())
    }

    fn host_span(&mut self, names: &Names, s: &HostSpan<'_>) -> std::io::Result<()> {
        let range = s.role == timeline::HostRole::Range;
        let setup = if range || !s.closed {
            None
        } else {
            self.setup_kind(names, s.name)
        };
        let r = self.rank(s.rank);
        if !s.closed {
            r.unclosed.push((s.tid, s.start, s.name));
            return Ok(());
        }
        r.touch(s.start, s.end);
        r.host_call(names, s.tid, s.start, s.end, s.name, range);
        if let Some(kind) = setup {
            r.setup_calls.push(SetupCall {
                kind,
                start: s.start,
                end: s.end,
                name: s.name,
            });
        }
        if let Some(c) = s.collective {
            let name = match &c.op {
                Some(op) => op.as_str().into(),
                None => names.name(s.name).into(),
            };
            if c.arrival_on_device {
                r.arrive_on_device.push((r.collectives.len(), s.tid));
            }
            r.collectives.push(CollectiveCall {
                name,
                start: s.start,
                end: s.end,
                called: s.start,
                bytes: c.bytes,
                comm: c.comm.clone(),
                tid: s.tid,
                on_device: false,
            });
        }
        Ok(())
    }

    fn other_span(&mut self, _: &Names, s: &OtherSpan) -> std::io::Result<()> {
        self.rank(s.rank).touch(s.start, s.end);
        Ok(())
    }

    fn flow(&mut self, f: &FlowPoint) {
        let r = self.rank(f.rank);
        if f.call.is_none() {
            // JSON flow events count for the rank's span; `.pftrace` flow
            // ids ride on slices, which count by themselves.
            r.touch(f.ts, f.ts);
        }
        if f.phase == FlowPhase::Start && f.submission {
            r.flows.push((f.id, f.tid, f.ts));
        }
    }

    fn mark(&mut self, m: &Mark) {
        self.rank(m.rank).touch(m.start, m.end);
    }

    fn dropped(&mut self, d: &Dropped<'_>) {
        self.rank(d.rank);
        let FileCollector { file, ranks, .. } = self;
        let example = || {
            let place = match d.place {
                Place::Event(i) => format!("event {i}"),
                Place::Packet(o) => format!("packet at byte {o}"),
                Place::Unknown => "an event".to_string(),
            };
            match d.name {
                Some(n) => format!("{file}: {place} ({n}): {}", d.problem),
                None => format!("{file}: {place}: {}", d.problem),
            }
        };
        ranks[d.rank].implausible.add(d.kind.label(), example);
    }
}

/// `t` of a `Tile #<t>: name` kernel name.
fn split_tile(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("Tile #")?;
    let end = rest.find(':')?;
    rest[..end].parse().ok()
}

/// Reads one trace file (any timeline format, docs/formats.md#timeline-model)
/// into one [`RankTrace`] per rank it holds. A file without events is one
/// idle rank.
pub fn read_trace_file(path: &Path, input_index: usize) -> Result<TraceFile, InputError> {
    let mut collector = FileCollector::new(path.display().to_string());
    let read = match timeline::read_file(path, collector.sink()) {
        Ok(read) => read,
        Err(timeline::SourceError::Input(e)) => return Err(e),
        // The collector never fails.
        Err(timeline::SourceError::Sink(e)) => return Err(InputError::io(path, &e)),
    };
    let why = no_events_reason(&read);
    let ranks = collector.finish(read, input_index);
    let no_events = ranks.is_empty().then_some(why);
    Ok(TraceFile { ranks, no_events })
}

/// A trace file read: its ranks, or why it has none.
#[derive(Debug)]
pub struct TraceFile {
    pub ranks: Vec<RankTrace>,
    /// The file yielded no event: why, for the caller's error or warning
    /// (docs/tracestat.md#inputs).
    pub no_events: Option<String>,
}

/// What to say of a file should it yield no event: an empty file (or
/// event list), or one cut before its first event (docs/errors.md).
pub fn no_events_reason(read: &TimelineRead) -> String {
    match &read.cut {
        Some(cut) => cut.describe_empty(),
        None => "no trace events (an empty file?)".to_string(),
    }
}

/// The ranks found, each closed (open ranges ended, a cut noted).
fn finish(
    mut parts: Vec<RankParts>,
    read: TimelineRead,
    file: &str,
    input_index: usize,
) -> Vec<RankTrace> {
    let truncated = read.cut.as_ref().map(|c| c.describe(read.format));
    let names = Arc::new(read.names);
    let slots = read.router.slots().len().max(parts.len());
    parts.resize_with(slots, RankParts::new);
    let mut ranks = Vec::new();
    for (slot, mut p) in parts.into_iter().enumerate() {
        let used = slot < read.router.slots().len() && read.router.is_used(slot);
        if !used {
            continue;
        }
        collectives_on_device(&mut p);
        // Ranges without their end end at the rank's last timestamp.
        let last = p.last;
        let mut unclosed = std::mem::take(&mut p.unclosed);
        unclosed.sort_by_key(|u| u.0);
        for (tid, start, name) in unclosed {
            if last >= start {
                let range = names.info(name).range;
                p.host_call(&names, tid, start, last, name, range);
            }
        }
        ranks.push(rank_trace(
            p,
            read.router.rank(slot),
            &names,
            file,
            input_index,
        ));
    }
    if ranks.is_empty() {
        // No event at all (an empty file, an empty event list, a file cut
        // before its first event): no rank, never an idle one that a
        // report would count as measured; the caller says why
        // (docs/tracestat.md#inputs).
        return ranks;
    }
    for r in &mut ranks {
        r.truncated = truncated.clone();
        r.trailing_data_line = read.trailing_data_line;
        r.warnings.clone_from(&read.warnings);
    }
    ranks
}

/// Collectives that only enqueue their work (NCCL through c10d) take the
/// span of the device work launched inside them: a rank arrives when that
/// work starts, and it ends when the collective completes
/// (docs/tracestat.md#collectives). The work is found through the launch
/// links of the calls on the collective's host thread within its span; a
/// collective that launched nothing keeps its host span.
fn collectives_on_device(p: &mut RankParts) {
    if p.arrive_on_device.is_empty() {
        return;
    }
    let mut by_flow: FastMap<u64, (Ns, Ns)> = FastMap::default();
    for k in &p.kernels {
        if let Some(id) = k.flow {
            let e = by_flow.entry(id).or_insert((k.start, k.end));
            e.0 = e.0.min(k.start);
            e.1 = e.1.max(k.end);
        }
    }
    let mut launches: Vec<(u64, Ns, u64)> =
        p.flows.iter().map(|&(id, tid, ts)| (tid, ts, id)).collect();
    launches.sort_unstable();
    for &(i, tid) in &p.arrive_on_device {
        let c = &mut p.collectives[i];
        let from = launches.partition_point(|l| (l.0, l.1) < (tid, c.start));
        let mut span: Option<(Ns, Ns)> = None;
        for &(t, ts, id) in &launches[from..] {
            if t != tid || ts > c.end {
                break;
            }
            if let Some(&(s, e)) = by_flow.get(&id) {
                span = Some(span.map_or((s, e), |(a, b)| (a.min(s), b.max(e))));
            }
        }
        if let Some((start, end)) = span {
            c.start = start;
            c.end = end;
            c.on_device = true;
        }
    }
}

fn rank_trace(
    p: RankParts,
    rank: Option<u32>,
    names: &Arc<Names>,
    file: &str,
    input_index: usize,
) -> RankTrace {
    RankTrace {
        rank,
        input_index,
        file: file.to_string(),
        names: Arc::clone(names),
        kernels: p.kernels,
        host: p.host,
        api: p.api,
        host_cover: p.host_cover,
        host_first: p.host_first,
        host_last: p.host_last,
        flows: p.flows,
        devices: p.devices,
        copy_engines: p.copy_engines,
        thread_names: p.thread_names,
        copy_bytes: p.copy_bytes,
        collectives: p.collectives,
        setup_calls: p.setup_calls,
        implausible: p.implausible,
        first: p.first,
        last: p.last,
        truncated: None,
        trailing_data_line: None,
        warnings: Vec::new(),
    }
}
