//! The input layer: one streaming pass over a trace file keeps the
//! intervals the analyses need and nothing else (docs/tracestat.md#memory).
//!
//! A file is usually one rank (`<app>.<pid>.<rank>.json`, or
//! `rank_<r>.*/chrome_trace.json`); a merged trace holds several, told apart
//! by the `RANK <r> ...` process names (docs/formats.md#trace-json-ids).
//! Events are not in time order in unitrace traces (device events are
//! flushed in batches, an `X` is written when it ends), so everything kept
//! is sorted later by the analyses.

use std::collections::HashSet;

use rustc_hash::FxHashMap as FastMap;
use std::path::Path;

use unitrace_core::trace::{
    decode_string_content, object_members, parse_u64, Event, Field, TraceReader,
};
use unitrace_core::InputError;

use crate::classify::{host_kind, is_collective_call, is_host_range, HostKind};
use crate::time::{us_text_to_ns, Ns};

/// Events further than this from a rank's first timestamp are taken for a
/// clock that jumped (docs/tracestat.md#implausible-events).
pub const CLOCK_JUMP_NS: Ns = 86_400 * 1_000_000_000;

/// Host calls of one kind closer than this are one stretch of host activity.
pub const HOST_JOIN_NS: Ns = 1_000;

/// One device command (`ph` X, `cat` gpu_op).
#[derive(Debug, Clone, Copy)]
pub struct KernelRun {
    pub start: Ns,
    pub end: Ns,
    pub name: u32,
    pub device: u32,
    /// Device thread (engine/track) id.
    pub tid: u64,
    /// Instance id (`args.id`), the key of its H2D flow.
    pub flow: Option<u64>,
}

/// One host range (`cat` cpu_op, `X` or a `B`/`E` pair, a name with `::`).
#[derive(Debug, Clone, Copy)]
pub struct HostCall {
    pub tid: u64,
    pub start: Ns,
    pub end: Ns,
    pub name: u32,
}

/// A oneCCL / MPI collective call of one rank.
#[derive(Debug, Clone)]
pub struct CollectiveCall {
    pub name: u32,
    pub start: Ns,
    pub end: Ns,
    pub bytes: Option<u64>,
    pub comm: Option<String>,
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

/// A `B` event waiting for its `E`; a collective call keeps the size and
/// communicator of its `B` arguments (Chrome traces may put them on either).
#[derive(Debug, Clone)]
struct OpenRange {
    start: Ns,
    name: u32,
    bytes: Option<u64>,
    comm: Option<String>,
}

/// Size and communicator of a collective call from its `args` object.
fn collective_args(args: Option<&[u8]>) -> (Option<u64>, Option<String>) {
    (
        args.and_then(collective_bytes),
        args.and_then(collective_comm),
    )
}

/// The communicator of a collective call, `args.comm`, as text: a string,
/// an integer, or the ITT metadata form, a list of values (`["world"]`,
/// `[3]`), whose items are joined by `,`. The `.pftrace` form of the same
/// value reads to the same text (`ingest_pftrace::slice_comm`), so that a
/// trace matches its collectives alike in both formats
/// (docs/tracestat.md#collectives).
pub(crate) fn collective_comm(args: &[u8]) -> Option<String> {
    let (_, span) = object_members(args).find(|(k, _)| *k == b"comm")?;
    let v = args[span.range()].trim_ascii();
    let items = match v.strip_prefix(b"[").and_then(|v| v.strip_suffix(b"]")) {
        Some(inner) => split_list_items(inner),
        None => vec![v],
    };
    let mut text = String::new();
    for (n, item) in items.into_iter().enumerate() {
        let item = item.trim_ascii();
        let piece = if item.len() >= 2 && item[0] == b'"' && item[item.len() - 1] == b'"' {
            let inner = &item[1..item.len() - 1];
            decode_string_content(inner, inner.contains(&b'\\'))?.into_owned()
        } else if !item.is_empty() && item.iter().all(|c| c.is_ascii_digit() || *c == b'-') {
            String::from_utf8_lossy(item).into_owned()
        } else {
            // null, objects, booleans: not a communicator.
            return None;
        };
        if n > 0 {
            text.push(',');
        }
        text.push_str(&piece);
    }
    (!text.is_empty()).then_some(text)
}

/// The items of a JSON list's inside (or of an ITT `.pftrace` annotation,
/// the same items joined by `,`), split at commas outside strings.
pub(crate) fn split_list_items(inner: &[u8]) -> Vec<&[u8]> {
    let mut items = Vec::new();
    let (mut start, mut in_string, mut escaped) = (0, false, false);
    for (i, &c) in inner.iter().enumerate() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if c == b'"' {
            in_string = true;
        } else if c == b',' {
            items.push(&inner[start..i]);
            start = i + 1;
        }
    }
    if start < inner.len() || !items.is_empty() {
        items.push(&inner[start..]);
    }
    items
}

/// What one rank's trace holds, as kept by the pass.
#[derive(Debug, Default)]
pub struct RankTrace {
    /// From the `RANK <r>` process name, else the file name.
    pub rank: Option<u32>,
    pub input_index: usize,
    pub file: String,
    pub names: Vec<Box<str>>,
    /// Interned by the raw (still escaped) name bytes: no decoding per event.
    name_ids: FastMap<Box<[u8]>, u32>,
    pub kernels: Vec<KernelRun>,
    /// Host ranges (names with `::`), for the projection onto the GPU.
    pub host: Vec<HostCall>,
    /// Where the host was busy, per [`HostKind`] (index `kind as usize`):
    /// every host call, overlapping neighbours merged as they come (a
    /// parent range is written after its children), for the gap causes.
    pub host_cover: [Vec<(Ns, Ns)>; 3],
    /// Earliest start and latest end of host calls.
    pub host_first: Ns,
    pub host_last: Ns,
    /// `(flow id, host thread, submission time)` of H2D flows, unsorted.
    pub flows: Vec<(u64, u64, Ns)>,
    /// Per name id: host kind, is a range, is a collective call.
    name_info: Vec<(HostKind, bool, bool)>,
    pub devices: Vec<Device>,
    device_ids: FastMap<(u64, Option<u32>), u32>,
    device_labels: FastMap<u64, String>,
    /// `(device pid, device tid)` of copy engines (thread names).
    pub copy_engines: HashSet<(u64, u64)>,
    pub collectives: Vec<CollectiveCall>,
    pub implausible: Implausible,
    /// Earliest start and latest end of every kept event.
    pub first: Ns,
    pub last: Ns,
    /// First timestamp seen: the reference of the clock-jump check.
    anchor: Option<Ns>,
    /// `B` events waiting for their `E`, per thread.
    open: FastMap<u64, Vec<OpenRange>>,
    /// Set when the file was cut (the writer was killed).
    pub truncated: Option<String>,
    /// Line of the first non-blank byte after the trace's closing bracket
    /// (docs/tracestat.md#inputs: ignored with a warning, as mergetrace does).
    pub trailing_data_line: Option<u64>,
    events: u64,
}

impl RankTrace {
    fn new(rank: Option<u32>, input_index: usize, file: &str) -> Self {
        RankTrace {
            rank,
            input_index,
            file: file.to_string(),
            first: Ns::MAX,
            last: Ns::MIN,
            host_first: Ns::MAX,
            host_last: Ns::MIN,
            ..RankTrace::default()
        }
    }

    /// The id of an event's name (`None` without a string name).
    fn event_name_id(&mut self, ev: &Event<'_>) -> Option<u32> {
        let raw = ev.str_raw(Field::Name)?;
        if let Some(&id) = self.name_ids.get(raw) {
            return Some(id);
        }
        let name = ev.str(Field::Name)?;
        Some(self.intern(raw, &name))
    }

    /// The id of a name given as UTF-8 bytes (`.pftrace` names).
    pub(crate) fn bytes_name_id(&mut self, raw: &[u8]) -> u32 {
        if let Some(&id) = self.name_ids.get(raw) {
            return id;
        }
        let name = String::from_utf8_lossy(raw).into_owned();
        self.intern(raw, &name)
    }

    fn intern(&mut self, raw: &[u8], name: &str) -> u32 {
        let id = self.names.len() as u32;
        self.name_info.push((
            host_kind(name),
            is_host_range(name),
            is_collective_call(name),
        ));
        self.names.push(name.into());
        self.name_ids.insert(raw.into(), id);
        id
    }

    /// Records a device command.
    pub(crate) fn kernel(
        &mut self,
        pid: u64,
        tid: u64,
        name: u32,
        start: Ns,
        end: Ns,
        flow: Option<u64>,
    ) {
        let tile = split_tile(self.name(name));
        let device = self.device_id(pid, tile);
        self.touch(start, end);
        self.events += 1;
        self.kernels.push(KernelRun {
            start,
            end,
            name,
            device,
            tid,
            flow,
        });
    }

    /// Whether a name is a oneCCL / MPI collective call.
    pub(crate) fn is_collective(&self, name: u32) -> bool {
        self.name_info[name as usize].2
    }

    /// Records a host slice, the H2D flows it starts and, for a collective
    /// call, its size and communicator.
    pub(crate) fn host_slice(
        &mut self,
        tid: u64,
        name: u32,
        (start, end): (Ns, Ns),
        flows: impl Iterator<Item = u64>,
        (bytes, comm): (Option<u64>, Option<String>),
    ) {
        self.touch(start, end);
        self.events += 1;
        self.host_call(tid, start, end, name);
        for id in flows {
            self.flows.push((id, tid, start));
        }
        if self.name_info[name as usize].2 {
            self.collectives.push(CollectiveCall {
                name,
                start,
                end,
                bytes,
                comm,
            });
        }
    }

    /// Records a host call or range.
    fn host_call(&mut self, tid: u64, start: Ns, end: Ns, name: u32) {
        let (kind, range, _) = self.name_info[name as usize];
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
        if range {
            self.host.push(HostCall {
                tid,
                start,
                end,
                name,
            });
        }
    }

    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
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

    fn touch(&mut self, start: Ns, end: Ns) {
        self.first = self.first.min(start);
        self.last = self.last.max(end);
    }

    pub fn has_events(&self) -> bool {
        self.events > 0
    }

    pub fn wall(&self) -> Ns {
        if self.last > self.first {
            self.last - self.first
        } else {
            0
        }
    }
}

/// The rank a unitrace file name carries: `<app>.<pid>.<rank>.json`
/// (docs/formats.md#trace-json) or a `rank_<r>` result-dir folder.
pub fn rank_from_path(path: &Path) -> Option<u32> {
    if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
        let parts: Vec<&str> = name.split('.').collect();
        let ext = parts[parts.len() - 1];
        if parts.len() >= 4
            && (ext.eq_ignore_ascii_case("json") || ext.eq_ignore_ascii_case("pftrace"))
        {
            let (pid, rank) = (parts[parts.len() - 3], parts[parts.len() - 2]);
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
            if digits(pid) && digits(rank) {
                return rank.parse().ok();
            }
        }
    }
    for comp in path.components().rev() {
        let s = comp.as_os_str().to_str()?;
        if let Some(rest) = s.strip_prefix("rank_") {
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            if !digits.is_empty() {
                return digits.parse().ok();
            }
        }
    }
    None
}

/// `r` of a `RANK r ...` process name, and the label without that prefix.
pub(crate) fn split_rank_label(label: &str) -> (Option<u32>, &str) {
    if let Some(rest) = label.strip_prefix("RANK ") {
        let end = rest.find(' ').unwrap_or(rest.len());
        if let Ok(r) = rest[..end].parse() {
            return (Some(r), rest[end..].trim_start());
        }
    }
    (None, label)
}

/// `t` and the rest of a `Tile #<t>: name` kernel name.
fn split_tile(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("Tile #")?;
    let end = rest.find(':')?;
    rest[..end].parse().ok()
}

/// A string member of an `args` object.
pub(crate) fn args_str(args: &[u8], key: &[u8]) -> Option<String> {
    let (_, span) = object_members(args).find(|(k, _)| *k == key)?;
    let v = &args[span.range()];
    if v.len() < 2 || v[0] != b'"' {
        return None;
    }
    let inner = &v[1..v.len() - 1];
    decode_string_content(inner, inner.contains(&b'\\')).map(|s| s.into_owned())
}

/// An integer member of `args`, quoted or not.
pub(crate) fn args_uint(args: &[u8], key: &[u8]) -> Option<u64> {
    let (_, span) = object_members(args).find(|(k, _)| *k == key)?;
    let v = &args[span.range()];
    let digits = v
        .strip_prefix(b"\"")
        .and_then(|v| v.strip_suffix(b"\""))
        .unwrap_or(v);
    parse_u64(digits)
}

/// Bytes a collective call moves, from its arguments: oneCCL ITT
/// `send_size:[n, ...]` (summed), MPI `ssize` / `dsize`
/// (docs/formats.md#trace-json-events).
pub(crate) fn collective_bytes(args: &[u8]) -> Option<u64> {
    let mut bytes: Option<u64> = None;
    for (key, span) in object_members(args) {
        let v = &args[span.range()];
        match key {
            b"send_size" | b"count_bytes" | b"bytes" => {
                let list = v.strip_prefix(b"[").and_then(|v| v.strip_suffix(b"]"));
                let items = list.unwrap_or(v);
                let mut sum = 0u64;
                for item in items.split(|&c| c == b',') {
                    let t = item.trim_ascii();
                    let t = t
                        .strip_prefix(b"\"")
                        .and_then(|t| t.strip_suffix(b"\""))
                        .unwrap_or(t);
                    if let Some(n) = parse_u64(t) {
                        sum = sum.saturating_add(n);
                    }
                }
                return Some(sum);
            }
            b"ssize" | b"dsize" => {
                if let Some(n) = parse_u64(v) {
                    bytes = Some(bytes.map_or(n, |b| b.max(n)));
                }
            }
            _ => {}
        }
    }
    bytes
}

/// Reads a trace from any source (`path` names it in messages).
pub fn read_trace<R: std::io::Read>(
    mut reader: TraceReader<R>,
    path: &Path,
    input_index: usize,
) -> Result<Vec<RankTrace>, InputError> {
    let mut pass = Pass::new(path, input_index);
    loop {
        match reader.next_event() {
            Ok(Some(ev)) => pass.feed(&ev),
            Ok(None) => break,
            Err(e) => return Err(e.into_input_error(path)),
        }
    }
    let summary = reader.summary();
    if !summary.empty && !summary.has_trace_events && summary.truncation.is_none() {
        return Err(InputError::at_file(
            path,
            "not a trace: no traceEvents array",
        ));
    }
    let truncated = summary.truncation.as_ref().map(|t| {
        format!(
            "cut short (writer killed?): {} bytes after the last complete event ignored",
            t.dropped_bytes
        )
    });
    let trailing_line = summary.trailing_data.map(|(line, _)| line);
    let mut ranks = pass.finish(path, truncated);
    for r in &mut ranks {
        r.trailing_data_line = trailing_line;
    }
    Ok(ranks)
}

/// `B` events without their `E` end at the rank's last timestamp (a cut
/// trace, or a range still open when the writer stopped).
fn close_open_ranges(r: &mut RankTrace) {
    let last = r.last;
    let open = std::mem::take(&mut r.open);
    let mut tids: Vec<_> = open.into_iter().collect();
    tids.sort_by_key(|(tid, _)| *tid);
    for (tid, stack) in tids {
        for open in stack {
            if last >= open.start {
                r.host_call(tid, open.start, last, open.name);
            }
        }
    }
}

pub(crate) struct Pass {
    pub(crate) ranks: Vec<RankTrace>,
    by_rank: FastMap<u32, usize>,
    /// pid -> index in `ranks`, from `RANK <r>` process names.
    pid_acc: FastMap<u64, usize>,
    input_index: usize,
    file: String,
}

impl Pass {
    pub(crate) fn new(path: &Path, input_index: usize) -> Pass {
        let display = path.display().to_string();
        let path_rank = rank_from_path(path);
        let mut pass = Pass {
            ranks: vec![RankTrace::new(path_rank, input_index, &display)],
            by_rank: FastMap::default(),
            pid_acc: FastMap::default(),
            input_index,
            file: display,
        };
        if let Some(r) = path_rank {
            pass.by_rank.insert(r, 0);
        }
        pass
    }

    /// The ranks found, each closed (open ranges ended, a cut noted).
    pub(crate) fn finish(self, path: &Path, truncated: Option<String>) -> Vec<RankTrace> {
        let mut ranks: Vec<RankTrace> = self.ranks.into_iter().filter(|r| r.has_events()).collect();
        if ranks.is_empty() {
            // An empty trace is still one (idle) rank: say so in the report
            // rather than dropping the file silently.
            ranks.push(RankTrace::new(
                rank_from_path(path),
                self.input_index,
                &path.display().to_string(),
            ));
        }
        for r in &mut ranks {
            r.truncated = truncated.clone();
            close_open_ranges(r);
        }
        ranks
    }

    /// A process name: `RANK r ...` ties the pid to rank r; device labels
    /// name the device rows.
    pub(crate) fn process_name(&mut self, pid: u64, label: &str) {
        let (rank, rest) = split_rank_label(label);
        let i = match rank {
            Some(r) => self.rank_acc(r),
            None => self.acc(Some(pid)),
        };
        self.pid_acc.insert(pid, i);
        if rest.starts_with("DEVICE") || label.contains("DEVICE<") {
            self.ranks[i].device_labels.insert(pid, rest.to_string());
        }
    }

    pub(crate) fn thread_name(&mut self, pid: u64, tid: u64, label: &str) {
        if label.contains("Copy Engine") {
            let i = self.acc(Some(pid));
            self.ranks[i].copy_engines.insert((pid, tid));
        }
    }

    pub(crate) fn acc(&mut self, pid: Option<u64>) -> usize {
        pid.and_then(|p| self.pid_acc.get(&p).copied()).unwrap_or(0)
    }

    fn rank_acc(&mut self, rank: u32) -> usize {
        if let Some(&i) = self.by_rank.get(&rank) {
            return i;
        }
        // The first labelled rank of a file whose name has no rank takes
        // over the default accumulator if that is still empty.
        if self.ranks[0].rank.is_none() && !self.ranks[0].has_events() && self.by_rank.is_empty() {
            self.ranks[0].rank = Some(rank);
            self.by_rank.insert(rank, 0);
            return 0;
        }
        let i = self.ranks.len();
        self.ranks
            .push(RankTrace::new(Some(rank), self.input_index, &self.file));
        self.by_rank.insert(rank, i);
        i
    }

    fn feed(&mut self, ev: &Event<'_>) {
        let Some(ph) = ev.str_raw(Field::Ph) else {
            return;
        };
        let pid = ev.uint(Field::Pid);
        if ph == b"M" {
            self.metadata(ev, pid);
            return;
        }
        let i = self.acc(pid);
        let r = &mut self.ranks[i];
        let Some(ts_text) = ev.number_text(Field::Ts) else {
            return;
        };
        r.events += 1;
        let index = ev.index();
        let example = |what: &str| {
            let name = ev.str(Field::Name).unwrap_or_default();
            format!("{}: event {index} ({name}): {what}", self.file)
        };
        let Some(ts) = us_text_to_ns(ts_text) else {
            let e = example("timestamp out of range");
            self.ranks[i].implausible.add("time out of range", || e);
            return;
        };
        let dur = match ev.number_text(Field::Dur) {
            Some(t) => match us_text_to_ns(t) {
                Some(d) => Some(d),
                None => {
                    let e = example("duration out of range");
                    self.ranks[i].implausible.add("time out of range", || e);
                    return;
                }
            },
            None => None,
        };
        let r = &mut self.ranks[i];
        if let Some(d) = dur {
            if d < 0 {
                let e = example(&format!("negative duration {d} ns"));
                r.implausible.add("negative duration", || e);
                return;
            }
        }
        let anchor = *r.anchor.get_or_insert(ts);
        if (ts - anchor).abs() > CLOCK_JUMP_NS {
            let e = example("more than a day away from the rank's first timestamp");
            r.implausible.add("clock jump", || e);
            return;
        }
        let end = ts.saturating_add(dur.unwrap_or(0));
        let cat = ev.str_raw(Field::Cat).unwrap_or(b"");
        match ph {
            b"X" if cat == b"gpu_op" => {
                let d = dur.unwrap_or(0);
                if d == 0 {
                    let e = example("zero-length device command");
                    r.implausible.add("zero-length kernel", || e);
                    return;
                }
                let Some(name) = r.event_name_id(ev) else {
                    return;
                };
                let tile = split_tile(r.name(name));
                let pid = pid.unwrap_or(0);
                let device = r.device_id(pid, tile);
                let flow = ev
                    .value(Field::Args)
                    .filter(|a| a.first() == Some(&b'{'))
                    .and_then(|a| args_uint(a, b"id"));
                r.touch(ts, end);
                r.kernels.push(KernelRun {
                    start: ts,
                    end,
                    name,
                    device,
                    tid: ev.uint(Field::Tid).unwrap_or(0),
                    flow,
                });
            }
            b"s" | b"t" | b"f" => {
                r.touch(ts, ts);
                if ph == b"s" && (cat.starts_with(b"Flow_H2D_") || cat.starts_with(b"CL_Flow_H2D_"))
                {
                    if let (Some(id), Some(tid)) = (ev.uint(Field::Id), ev.uint(Field::Tid)) {
                        r.flows.push((id, tid, ts));
                    }
                }
            }
            b"X" | b"B" | b"E" if cat != b"os_op" => {
                let Some(tid) = ev.uint(Field::Tid) else {
                    return;
                };
                if ph == b"E" {
                    match r.open.get_mut(&tid).and_then(|s| s.pop()) {
                        Some(open) if ts >= open.start => {
                            r.touch(open.start, ts);
                            r.host_call(tid, open.start, ts, open.name);
                            // A collective written as a B/E pair is matched
                            // across ranks as its X form is.
                            if r.name_info[open.name as usize].2 {
                                let args =
                                    ev.value(Field::Args).filter(|a| a.first() == Some(&b'{'));
                                let (bytes, comm) = collective_args(args);
                                r.collectives.push(CollectiveCall {
                                    name: open.name,
                                    start: open.start,
                                    end: ts,
                                    bytes: bytes.or(open.bytes),
                                    comm: comm.or(open.comm),
                                });
                            }
                        }
                        Some(_) => {
                            let e = example("ends before its begin");
                            r.implausible.add("end before start", || e);
                        }
                        None => {
                            let e = example("end without a begin");
                            r.implausible.add("end before start", || e);
                        }
                    }
                    return;
                }
                let Some(id) = r.event_name_id(ev) else {
                    return;
                };
                if ph == b"B" {
                    r.touch(ts, ts);
                    let (bytes, comm) = if r.name_info[id as usize].2 {
                        collective_args(ev.value(Field::Args).filter(|a| a.first() == Some(&b'{')))
                    } else {
                        (None, None)
                    };
                    r.open.entry(tid).or_default().push(OpenRange {
                        start: ts,
                        name: id,
                        bytes,
                        comm,
                    });
                    return;
                }
                r.touch(ts, end);
                r.host_call(tid, ts, end, id);
                if r.name_info[id as usize].2 {
                    let args = ev.value(Field::Args).filter(|a| a.first() == Some(&b'{'));
                    let (bytes, comm) = collective_args(args);
                    r.collectives.push(CollectiveCall {
                        name: id,
                        start: ts,
                        end,
                        bytes,
                        comm,
                    });
                }
            }
            _ => {
                r.touch(ts, end);
            }
        }
    }

    fn metadata(&mut self, ev: &Event<'_>, pid: Option<u64>) {
        let Some(kind) = ev.str_raw(Field::Name) else {
            return;
        };
        let Some(args) = ev.value(Field::Args).filter(|a| a.first() == Some(&b'{')) else {
            return;
        };
        let Some(label) = args_str(args, b"name") else {
            return;
        };
        let Some(pid) = pid else {
            return;
        };
        match kind {
            b"process_name" => self.process_name(pid, &label),
            b"thread_name" => {
                if let Some(tid) = ev.uint(Field::Tid) {
                    self.thread_name(pid, tid, &label);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_from_file_names() {
        assert_eq!(rank_from_path(Path::new("d/python.100024.3.json")), Some(3));
        assert_eq!(
            rank_from_path(Path::new("d/rank_12.python.7/chrome_trace.json")),
            Some(12)
        );
        assert_eq!(rank_from_path(Path::new("merged.json")), None);
    }

    #[test]
    fn collective_sizes() {
        assert_eq!(collective_bytes(b"{\"send_size\":[65536]}"), Some(65536));
        assert_eq!(collective_bytes(b"{\"send_size\":[1, 2]}"), Some(3));
        assert_eq!(
            collective_bytes(b"{\"dsize\": 16384, \"dst\": 1}"),
            Some(16384)
        );
        assert_eq!(collective_bytes(b"{\"x\": 1}"), None);
    }

    #[test]
    fn communicators() {
        let comm = |args: &str| collective_comm(args.as_bytes());
        assert_eq!(comm(r#"{"comm": "world"}"#).as_deref(), Some("world"));
        assert_eq!(comm(r#"{"comm": 5}"#).as_deref(), Some("5"));
        // ITT metadata lists (docs/formats.md#trace-json-events).
        assert_eq!(comm(r#"{"comm":["a"]}"#).as_deref(), Some("a"));
        assert_eq!(comm(r#"{"comm":[3, 4]}"#).as_deref(), Some("3,4"));
        assert_eq!(
            comm(r#"{"comm":["x,y", "z\"q"]}"#).as_deref(),
            Some("x,y,z\"q")
        );
        assert_eq!(comm(r#"{"comm": null}"#), None);
        assert_eq!(comm(r#"{"comm": []}"#), None);
        assert_eq!(comm(r#"{"send_size": [1]}"#), None);
    }
}
