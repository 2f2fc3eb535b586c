//! Memory copies (docs/tracestat.md#copies): per rank, the host<->device
//! and device copies, those from or to pageable host memory (the driver
//! stages them through a pinned buffer), those under 64 KiB (their time is
//! mostly the fixed cost of a command), and those that ran on a compute
//! queue of a device that has a copy engine, counted for the time no copy
//! engine of the device was busy: the numbers the findings
//! `pageable-copy`, `small-copy` and `serialised-copy` read
//! (docs/findings.md).

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};
use unitrace_core::timeline::names::{DeviceOpKind, MemoryKind};
use unitrace_render::sections::{Column, Section, Table, Unit, Value};

use super::breakdown::limit_rows;
use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::classify::Class;
use crate::rank_model::{union_segments, RankModel};
use crate::time::{us, Ns};

/// Copies under this many bytes are small (docs/findings.md#small-copy).
pub const SMALL_COPY_BYTES: u64 = 64 << 10;

/// Some copies of one rank: how many, their time, their bytes (of those
/// whose size is known), when the first started and the last ended, and
/// the name (without its size) with the most time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CopyTally {
    pub count: u64,
    pub ns: Ns,
    pub bytes: u64,
    pub first_ns: Ns,
    pub last_ns: Ns,
    pub top_name: String,
}

impl CopyTally {
    fn add(&mut self, start: Ns, end: Ns, ns: Ns, bytes: Option<u64>) {
        if self.count == 0 {
            (self.first_ns, self.last_ns) = (start, end);
        }
        self.count += 1;
        self.ns += ns;
        self.bytes += bytes.unwrap_or(0);
        self.first_ns = self.first_ns.min(start);
        self.last_ns = self.last_ns.max(end);
    }
}

/// One rank's copies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankCopies {
    /// Every copy (fills are not copies).
    pub all: CopyTally,
    /// Copies whose size is known (unitrace names end in `[bytes]`, Kineto
    /// copies carry `args.bytes`).
    pub sized: u64,
    /// From or to pageable host memory.
    pub pageable: CopyTally,
    /// Of a known size under [`SMALL_COPY_BYTES`].
    pub small: CopyTally,
    /// On a compute queue of a device with a copy engine; `ns` is the
    /// time no copy engine of the device was busy.
    pub on_compute_queue: CopyTally,
}

#[derive(Debug, Clone, Serialize)]
pub struct CopyRow {
    pub rank: String,
    pub copies: u64,
    pub copy_us: f64,
    pub bytes: u64,
    pub sized: u64,
    pub pageable: u64,
    pub pageable_us: f64,
    pub small: u64,
    pub small_us: f64,
    pub on_compute_queue: u64,
    pub on_compute_queue_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CopiesOut {
    pub copies: Vec<CopyRow>,
}

pub struct Copies;

impl Analyzer for Copies {
    type Rank = RankCopies;
    type Output = CopiesOut;

    fn observe(m: &RankModel<'_>, _: &RankOptions) -> Self::Rank {
        observe(m)
    }

    fn part(rank: &RankSummary) -> &Self::Rank {
        &rank.parts.copies
    }

    fn finish(ranks: &Ranks<'_>, _: &Finished) -> CopiesOut {
        let copies = ranks
            .ranks
            .iter()
            .zip(&ranks.labels)
            .map(|(r, label)| {
                let c = Self::part(r);
                CopyRow {
                    rank: label.clone(),
                    copies: c.all.count,
                    copy_us: us(c.all.ns),
                    bytes: c.all.bytes,
                    sized: c.sized,
                    pageable: c.pageable.count,
                    pageable_us: us(c.pageable.ns),
                    small: c.small.count,
                    small_us: us(c.small.ns),
                    on_compute_queue: c.on_compute_queue.count,
                    on_compute_queue_us: us(c.on_compute_queue.ns),
                }
            })
            .collect();
        CopiesOut { copies }
    }

    fn sections(r: &Report, screen: &Screen) -> Vec<Section> {
        let rows = &r.out.copies.copies;
        let mut s = Section::new(
            "copies",
            "Memory copies (from pageable host memory, under 64 KiB, on a compute queue while a copy engine was free)",
        );
        if rows.iter().all(|c| c.copies == 0) {
            s.lines.push("(no memory copy)".to_string());
        }
        let shown: Vec<usize> = (0..rows.len())
            .filter(|&i| screen.ranks.contains(&rows[i].rank))
            .collect();
        let mut t = Table::new(
            "copies",
            "",
            vec![
                Column::new("rank", "rank", Unit::Text),
                Column::new("copies", "copies", Unit::Count),
                Column::new("copy_us", "time", Unit::Us),
                Column::new("bytes", "bytes", Unit::Bytes),
                Column::new("sized", "sized", Unit::Count).files_only(),
                Column::new("pageable", "pageable", Unit::Count),
                Column::new("pageable_us", "pageable", Unit::Us),
                Column::new("small", "small", Unit::Count),
                Column::new("small_us", "small", Unit::Us),
                Column::new("on_compute_queue", "on compute", Unit::Count),
                Column::new("on_compute_queue_us", "on compute", Unit::Us),
            ],
        );
        for c in rows {
            t.push(vec![
                Value::from(&c.rank),
                c.copies.into(),
                c.copy_us.into(),
                c.bytes.into(),
                c.sized.into(),
                c.pageable.into(),
                c.pageable_us.into(),
                c.small.into(),
                c.small_us.into(),
                c.on_compute_queue.into(),
                c.on_compute_queue_us.into(),
            ]);
        }
        limit_rows(&mut t, &shown, screen);
        // Without any copy the screen says so in a line, not a table of zeros.
        t.files_only = rows.iter().all(|c| c.copies == 0);
        t.notes.push("(bytes: of the copies whose size the trace gives; small: under 64 KiB; on compute: the time no copy engine of the device was busy)".to_string());
        s.tables.push(t);
        if rows.is_empty() {
            return Vec::new();
        }
        vec![s]
    }
}

/// The size of a copy from its unitrace name's `[bytes]` suffix
/// (docs/formats.md#trace-json-events).
pub fn copy_bytes(name: &str) -> Option<u64> {
    let inner = name.strip_suffix(']')?;
    let at = inner.rfind('[')?;
    let digits = &inner[at + 1..];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn is_pageable(kind: DeviceOpKind) -> bool {
    matches!(kind, DeviceOpKind::Copy { from, to }
        if from == MemoryKind::PageableHost || to == MemoryKind::PageableHost)
}

/// Per device: the stretches where every copy engine of the device is
/// busy (a copy moved to a copy engine would have had to wait).
fn saturated_copy_engines(m: &RankModel<'_>) -> BTreeMap<u32, Vec<(Ns, Ns)>> {
    let t = m.trace;
    // (device, engine tid) -> intervals.
    let mut by_engine: BTreeMap<(u32, u64), Vec<(Ns, Ns)>> = BTreeMap::new();
    for k in &t.kernels {
        let pid = t.devices[k.device as usize].pid;
        if t.copy_engines.contains(&(pid, k.tid)) {
            by_engine
                .entry((k.device, k.tid))
                .or_default()
                .push((k.start, k.end));
        }
    }
    // Engines a device has, used or not: every copy-engine thread of its pid.
    let mut engines: BTreeMap<u32, usize> = BTreeMap::new();
    for (d, dev) in t.devices.iter().enumerate() {
        let n = t.copy_engines.iter().filter(|e| e.0 == dev.pid).count();
        if n > 0 {
            engines.insert(d as u32, n);
        }
    }
    let mut edges: BTreeMap<u32, Vec<(Ns, i32)>> = BTreeMap::new();
    for ((d, _), v) in by_engine {
        for (s, e) in union_segments(v) {
            let list = edges.entry(d).or_default();
            list.push((s, 1));
            list.push((e, -1));
        }
    }
    let mut out = BTreeMap::new();
    for (d, n) in engines {
        let mut list = edges.remove(&d).unwrap_or_default();
        list.sort_unstable();
        let mut busy = 0usize;
        let mut since = 0;
        let mut stretches = Vec::new();
        for (t, delta) in list {
            let before = busy;
            busy = (busy as i64 + delta as i64) as usize;
            if before < n && busy >= n {
                since = t;
            } else if before >= n && busy < n && t > since {
                stretches.push((since, t));
            }
        }
        out.insert(d, stretches);
    }
    out
}

/// Time of `(start, end)` not covered by the sorted, disjoint `cover`.
fn uncovered(start: Ns, end: Ns, cover: &[(Ns, Ns)]) -> Ns {
    let from = cover.partition_point(|c| c.1 <= start);
    let mut covered = 0;
    for &(s, e) in &cover[from..] {
        if s >= end {
            break;
        }
        covered += e.min(end) - s.max(start);
    }
    end - start - covered
}

fn observe(m: &RankModel<'_>) -> RankCopies {
    let t = m.trace;
    let mut out = RankCopies::default();
    // Queues that run compute kernels: (device, tid).
    let compute_queues: HashSet<(u32, u64)> = t
        .kernels
        .iter()
        .zip(&m.classes)
        .filter(|(k, &c)| {
            c == Class::Compute && t.names.info(k.name).device_kind == DeviceOpKind::Kernel
        })
        .map(|(k, _)| (k.device, k.tid))
        .collect();
    let saturated = saturated_copy_engines(m);
    // (tally, name) -> time, for each tally's top name.
    let mut names: [BTreeMap<&str, Ns>; 4] = Default::default();
    for k in &t.kernels {
        let kind = t.names.info(k.name).device_kind;
        if !matches!(kind, DeviceOpKind::Copy { .. }) {
            continue;
        }
        let name = t.name(k.name);
        let short = m.kinds[k.name.index()].short_name.as_str();
        let bytes =
            copy_bytes(name).or_else(|| t.copy_bytes.get(&(k.device, k.tid, k.start)).copied());
        let ns = k.end - k.start;
        out.all.add(k.start, k.end, ns, bytes);
        *names[0].entry(short).or_default() += ns;
        if bytes.is_some() {
            out.sized += 1;
        }
        if is_pageable(kind) {
            out.pageable.add(k.start, k.end, ns, bytes);
            *names[1].entry(short).or_default() += ns;
        }
        if bytes.is_some_and(|b| b < SMALL_COPY_BYTES) {
            out.small.add(k.start, k.end, ns, bytes);
            *names[2].entry(short).or_default() += ns;
        }
        let pid = t.devices[k.device as usize].pid;
        let on_copy_engine = t.copy_engines.contains(&(pid, k.tid));
        if let Some(cover) = saturated.get(&k.device) {
            if !on_copy_engine && compute_queues.contains(&(k.device, k.tid)) {
                let free = uncovered(k.start, k.end, cover);
                out.on_compute_queue.add(k.start, k.end, free, bytes);
                *names[3].entry(short).or_default() += free;
            }
        }
    }
    let tallies = [
        &mut out.all,
        &mut out.pageable,
        &mut out.small,
        &mut out.on_compute_queue,
    ];
    for (tally, by_name) in tallies.into_iter().zip(&names) {
        // The most time; the first name on a tie (map order).
        let mut top: Option<(&str, Ns)> = None;
        for (&n, &ns) in by_name {
            if top.is_none_or(|t| ns > t.1) {
                top = Some((n, ns));
            }
        }
        tally.top_name = top.map(|t| t.0.to_string()).unwrap_or_default();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_come_from_the_name() {
        assert_eq!(
            copy_bytes("zeCommandListAppendMemoryCopy(M2D)[16777216]"),
            Some(16_777_216)
        );
        assert_eq!(copy_bytes("Memcpy HtoD (Pageable -> Device)"), None);
        assert_eq!(copy_bytes("k[SIMD32 {1; 1; 1} {2; 1; 1}]"), None);
        assert_eq!(copy_bytes("x[]"), None);
    }

    #[test]
    fn uncovered_time() {
        let cover = [(10, 20), (30, 40)];
        assert_eq!(uncovered(0, 50, &cover), 30);
        assert_eq!(uncovered(15, 35, &cover), 10);
        assert_eq!(uncovered(20, 30, &cover), 10);
        assert_eq!(uncovered(12, 18, &cover), 0);
    }
}
