//! `--stats`: where the GPU time went, from the trace alone, computed in the
//! merge's streaming pass.
//!
//! Per rank: device time of every device command (`ph` X, `cat` gpu_op,
//! docs/formats.md#trace-json-events), GPU busy time (union of device intervals) against the wall
//! time (first to last event), and per kernel name: count, total, mean, max,
//! share of the rank's GPU time, and the host range it ran under. The host
//! range of a kernel instance is the innermost host range (a `cpu_op` X or
//! B/E event whose name contains `::`: ITT/PyTorch ops, `dnnl::`,
//! `oneCCL::`, `MPI::`) enclosing the host end of its `Flow_H2D_<K>_<R>`
//! flow (docs/formats.md#trace-json-flows), i.e. the submitting API call, on that host thread.
//!
//! With `--schema`, [`apply_schema`] then groups each rank's kernels by
//! category (count, total, mean, max, share), unmatched kernels in the
//! default category `device` as summary.py does (docs/formats.md#category-json-lookup).
//!
//! Memory: one rank at a time; 24 bytes per device command, 12 per flow
//! start and 20 per host range of that rank.

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use std::io::Write;
use std::path::Path;

use anyhow::Result;
use unitrace_core::category_schema::{CategorySchema, RuleId, DEFAULT_DEVICE_CATEGORY};
use unitrace_core::summary_text::normalize_kernel_name;
use unitrace_core::timeline::{
    self, DeviceOp, FlowPhase, FlowPoint, HostRole, HostSpan, Mark, Names, Ns, OtherSpan, TraceSink,
};
use unitrace_core::trace::{object_members, parse_u64, Event, Field};
use unitrace_render::parquet::{Column, Schema};
use unitrace_render::table::{TableFormat, TableWriter};

/// Accumulates one rank.
pub struct RankStats {
    rank: Option<u32>,
    input_index: usize,
    file: String,
    wall_start: f64,
    wall_end: f64,
    kernel_ids: FxHashMap<Box<str>, u32>,
    kernels: Vec<KernelAgg>,
    device: Vec<DeviceRun>,
    flow_sources: FxHashMap<u64, (u64, f64)>,
    range_names: Vec<Box<str>>,
    range_ids: FxHashMap<Box<str>, u32>,
    ranges: FxHashMap<u64, Vec<HostRange>>,
    open_ranges: FxHashMap<u64, Vec<(f64, u32)>>,
    /// Events left out because their `dur` is negative or their `ts`/`dur`
    /// is out of range (`1e400`): they would corrupt every sum.
    invalid_times: u64,
    /// [`TimelineStats`]: the first time seen (ns), times count from it.
    origin_ns: Option<Ns>,
}

struct KernelAgg {
    name: Box<str>,
    count: u64,
    total: f64,
    max: f64,
}

struct DeviceRun {
    kernel: u32,
    start: f64,
    dur: f64,
    id: Option<u64>,
}

#[derive(Clone, Copy)]
struct HostRange {
    start: f64,
    end: f64,
    name: u32,
}

/// `--stats` of a trace read through the trace source (Kineto's
/// vocabulary, docs/formats.md#kineto-json): device activities, launch
/// links from `correlation`, host ranges by category, in µs from the
/// file's first time (absolute epoch nanoseconds do not fit an `f64`
/// exactly).
pub struct TimelineStats<'a> {
    stats: &'a mut RankStats,
}

impl<'a> TimelineStats<'a> {
    pub fn new(stats: &'a mut RankStats) -> Self {
        TimelineStats { stats }
    }

    fn us(&mut self, t: Ns) -> f64 {
        let origin = *self.stats.origin_ns.get_or_insert(t);
        (t - origin) as f64 / 1000.0
    }
}

impl TraceSink for TimelineStats<'_> {
    fn device_op(&mut self, names: &Names, op: &DeviceOp) -> std::io::Result<()> {
        let (ts, dur) = (self.us(op.start), (op.end - op.start) as f64 / 1000.0);
        if self.stats.span(ts, dur) && op.name != timeline::NameId::NONE {
            self.stats.device_run(names.name(op.name), ts, dur, op.flow);
        }
        Ok(())
    }

    fn host_span(&mut self, names: &Names, s: &HostSpan<'_>) -> std::io::Result<()> {
        if !s.closed {
            return Ok(());
        }
        let (ts, dur) = (self.us(s.start), (s.end - s.start) as f64 / 1000.0);
        if self.stats.span(ts, dur) && s.role == HostRole::Range {
            self.stats.range(s.tid, names.name(s.name), ts, dur);
        }
        Ok(())
    }

    fn other_span(&mut self, _: &Names, s: &OtherSpan) -> std::io::Result<()> {
        let (ts, dur) = (self.us(s.start), (s.end - s.start) as f64 / 1000.0);
        self.stats.span(ts, dur);
        Ok(())
    }

    fn flow(&mut self, f: &FlowPoint) {
        let ts = self.us(f.ts);
        if f.call.is_none() {
            self.stats.span(ts, 0.0);
        }
        if f.submission && f.phase == FlowPhase::Start {
            self.stats.flow_source(f.id, f.tid, ts);
        }
    }

    fn mark(&mut self, m: &Mark) {
        let (ts, dur) = (self.us(m.start), (m.end - m.start) as f64 / 1000.0);
        self.stats.span(ts, dur);
    }
}

/// The finished numbers of one rank.
#[derive(Debug, Clone)]
pub struct RankReport {
    pub rank: Option<u32>,
    pub input_index: usize,
    pub file: String,
    pub gpu_time_us: f64,
    pub busy_us: f64,
    pub wall_us: f64,
    pub launches: u64,
    /// Sorted by total device time, largest first.
    pub kernels: Vec<KernelRow>,
    /// Filled by [`apply_schema`] (`--schema`).
    pub categories: Option<RankCategories>,
}

#[derive(Debug, Clone)]
pub struct KernelRow {
    pub name: String,
    pub count: u64,
    pub total_us: f64,
    pub max_us: f64,
    /// Device time per host range, largest first (`(none)` when no range
    /// encloses the submission or the command has no flow).
    pub ranges: Vec<(String, f64)>,
    /// Category from `--schema` ([`apply_schema`]).
    pub category: Option<String>,
}

/// Device time of one kernel category in one rank (`--schema`).
#[derive(Debug, Clone, PartialEq)]
pub struct CategoryRow {
    pub category: String,
    pub count: u64,
    pub total_us: f64,
    pub max_us: f64,
}

/// One rank's kernels grouped by category (`--schema`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankCategories {
    /// Sorted by total device time, largest first, then by name.
    pub rows: Vec<CategoryRow>,
    /// Launches and device time of the kernels no rule matched (they are
    /// also counted in the default category's row).
    pub unmatched_launches: u64,
    pub unmatched_us: f64,
    /// Distinct kernel names (shape cut) no rule matched, sorted.
    pub unmatched_names: Vec<String>,
}

impl RankReport {
    pub fn label(&self) -> String {
        match self.rank {
            Some(r) => r.to_string(),
            None => format!("#{}", self.input_index),
        }
    }
    pub fn busy_pct(&self) -> f64 {
        pct(self.busy_us, self.wall_us)
    }
}

fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        0.0
    }
}

const NO_RANGE: &str = "(none)";

impl RankStats {
    pub fn new(rank: Option<u32>, input_index: usize, path: &Path) -> RankStats {
        RankStats {
            rank,
            input_index,
            file: path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string()),
            wall_start: f64::INFINITY,
            wall_end: f64::NEG_INFINITY,
            kernel_ids: FxHashMap::default(),
            kernels: Vec::new(),
            device: Vec::new(),
            flow_sources: FxHashMap::default(),
            range_names: Vec::new(),
            range_ids: FxHashMap::default(),
            ranges: FxHashMap::default(),
            open_ranges: FxHashMap::default(),
            invalid_times: 0,
            origin_ns: None,
        }
    }

    /// Events left out of the statistics for a negative `dur` or a `ts` /
    /// `dur` out of range (the caller warns).
    pub fn invalid_times(&self) -> u64 {
        self.invalid_times
    }

    pub fn feed(&mut self, ev: &Event<'_>) {
        let Some(ph) = ev.str_raw(Field::Ph) else {
            return;
        };
        if ph == b"M" {
            return;
        }
        let Some(ts) = ev.f64(Field::Ts) else {
            return;
        };
        let dur = ev.f64(Field::Dur).unwrap_or(0.0);
        if !self.span(ts, dur) {
            return;
        }
        let cat = ev.str_raw(Field::Cat).unwrap_or(b"");
        match ph {
            b"X" if cat == b"gpu_op" => {
                if let Some(name) = ev.str(Field::Name) {
                    self.device_run(&name, ts, dur, args_id(ev));
                }
            }
            b"s" if cat.starts_with(b"Flow_H2D_") || cat.starts_with(b"CL_Flow_H2D_") => {
                if let (Some(id), Some(tid)) = (ev.uint(Field::Id), ev.uint(Field::Tid)) {
                    self.flow_source(id, tid, ts);
                }
            }
            b"X" | b"B" | b"E" if cat != b"gpu_op" => {
                let Some(tid) = ev.uint(Field::Tid) else {
                    return;
                };
                if ph == b"E" {
                    self.host_end(tid, ts);
                    return;
                }
                let Some(name) = ev.str(Field::Name) else {
                    return;
                };
                if ph == b"B" {
                    self.host_begin(tid, &name, ts);
                } else {
                    self.host_range(tid, &name, ts, dur);
                }
            }
            _ => {}
        }
    }

    /// Counts `[ts, ts + dur]` (µs) in the wall time; `false` (and the
    /// event is left out) when the times are not finite or `dur` negative.
    pub fn span(&mut self, ts: f64, dur: f64) -> bool {
        // A negative duration or an infinite time (a corrupt trace) would
        // silently cancel or swamp the sums (issue 10): leave the event out.
        if !ts.is_finite() || !dur.is_finite() || dur < 0.0 {
            self.invalid_times += 1;
            return false;
        }
        self.wall_start = self.wall_start.min(ts);
        self.wall_end = self.wall_end.max(ts + dur);
        true
    }

    /// One device command (µs); `id` is its instance id, the key of the
    /// H2D flow from its submitting call.
    pub fn device_run(&mut self, name: &str, ts: f64, dur: f64, id: Option<u64>) {
        let kernel = match self.kernel_ids.get(name) {
            Some(&k) => k,
            None => {
                let k = self.kernels.len() as u32;
                let name: Box<str> = name.into();
                self.kernel_ids.insert(name.clone(), k);
                self.kernels.push(KernelAgg {
                    name,
                    count: 0,
                    total: 0.0,
                    max: 0.0,
                });
                k
            }
        };
        let agg = &mut self.kernels[kernel as usize];
        agg.count += 1;
        agg.total += dur;
        agg.max = agg.max.max(dur);
        self.device.push(DeviceRun {
            kernel,
            start: ts,
            dur,
            id,
        });
    }

    /// The host end of the H2D flow `id`, on host thread `thread` at `ts`.
    pub fn flow_source(&mut self, id: u64, thread: u64, ts: f64) {
        self.flow_sources.insert(id, (thread, ts));
    }

    /// A complete host call or range on `thread`; only ranges whose name
    /// contains `::` (ITT, oneCCL, MPI, dnnl) are kept.
    pub fn host_range(&mut self, thread: u64, name: &str, ts: f64, dur: f64) {
        if !name.contains("::") {
            return;
        }
        self.range(thread, name, ts, dur);
    }

    /// A host range on `thread`, whatever its name (the trace's vocabulary
    /// said it is one: Kineto's `cpu_op`, `user_annotation`,
    /// `python_function`).
    pub fn range(&mut self, thread: u64, name: &str, ts: f64, dur: f64) {
        let id = self.range_id(name);
        self.ranges.entry(thread).or_default().push(HostRange {
            start: ts,
            end: ts + dur,
            name: id,
        });
    }

    /// The start of a host range (`B`).
    pub fn host_begin(&mut self, thread: u64, name: &str, ts: f64) {
        if !name.contains("::") {
            return;
        }
        let id = self.range_id(name);
        self.open_ranges.entry(thread).or_default().push((ts, id));
    }

    /// The end of the innermost open host range of `thread` (`E`).
    pub fn host_end(&mut self, thread: u64, ts: f64) {
        if let Some((start, name)) = self.open_ranges.get_mut(&thread).and_then(|s| s.pop()) {
            self.ranges.entry(thread).or_default().push(HostRange {
                start,
                end: ts,
                name,
            });
        }
    }

    fn range_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.range_ids.get(name) {
            return id;
        }
        let id = self.range_names.len() as u32;
        self.range_names.push(name.into());
        self.range_ids.insert(name.into(), id);
        id
    }

    pub fn finish(mut self) -> RankReport {
        // GPU busy time: union of the device intervals.
        self.device.sort_by(|a, b| a.start.total_cmp(&b.start));
        let mut busy = 0.0;
        let mut cur: Option<(f64, f64)> = None;
        for d in &self.device {
            let (s, e) = (d.start, d.start + d.dur);
            match &mut cur {
                Some((_, ce)) if s <= *ce => *ce = ce.max(e),
                _ => {
                    if let Some((cs, ce)) = cur {
                        busy += ce - cs;
                    }
                    cur = Some((s, e));
                }
            }
        }
        if let Some((cs, ce)) = cur {
            busy += ce - cs;
        }

        // Host range of each device run: innermost range enclosing the
        // submission time on the submitting thread (ranges of one thread
        // nest, so a sweep with a stack finds it).
        let mut queries: HashMap<u64, Vec<(f64, usize)>> = HashMap::new();
        for (i, d) in self.device.iter().enumerate() {
            if let Some(&(tid, ts)) = d.id.and_then(|id| self.flow_sources.get(&id)) {
                queries.entry(tid).or_default().push((ts, i));
            }
        }
        let mut run_range: Vec<Option<u32>> = vec![None; self.device.len()];
        for (tid, mut qs) in queries {
            let Some(ranges) = self.ranges.get_mut(&tid) else {
                continue;
            };
            ranges.sort_by(|a, b| a.start.total_cmp(&b.start).then(b.end.total_cmp(&a.end)));
            qs.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut stack: Vec<HostRange> = Vec::new();
            let mut next = 0;
            for (ts, run) in qs {
                while next < ranges.len() && ranges[next].start <= ts {
                    let r = ranges[next];
                    while stack.last().is_some_and(|top| top.end <= r.start) {
                        stack.pop();
                    }
                    stack.push(r);
                    next += 1;
                }
                while stack.last().is_some_and(|top| top.end < ts) {
                    stack.pop();
                }
                run_range[run] = stack.last().map(|r| r.name);
            }
        }
        let mut by_range: Vec<HashMap<Option<u32>, f64>> = vec![HashMap::new(); self.kernels.len()];
        for (d, r) in self.device.iter().zip(&run_range) {
            *by_range[d.kernel as usize].entry(*r).or_default() += d.dur;
        }

        // `Sum for f64` starts at -0.0: a rank without kernels printed
        // `-0.000` ms (found by the issue-10 system tests). Start at +0.0.
        let gpu_time: f64 = self.kernels.iter().fold(0.0, |acc, k| acc + k.total);
        let launches = self.kernels.iter().map(|k| k.count).sum();
        let names = &self.range_names;
        let mut kernels: Vec<KernelRow> = self
            .kernels
            .into_iter()
            .zip(by_range)
            .map(|(k, ranges)| {
                let mut ranges: Vec<(String, f64)> = ranges
                    .into_iter()
                    .map(|(r, t)| {
                        let name = r.map_or(NO_RANGE, |r| &names[r as usize]);
                        (name.to_string(), t)
                    })
                    .collect();
                ranges.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                KernelRow {
                    name: k.name.into(),
                    count: k.count,
                    total_us: k.total,
                    max_us: k.max,
                    ranges,
                    category: None,
                }
            })
            .collect();
        kernels.sort_by(|a, b| {
            b.total_us
                .total_cmp(&a.total_us)
                .then_with(|| a.name.cmp(&b.name))
        });
        let wall = if self.wall_end > self.wall_start {
            self.wall_end - self.wall_start
        } else {
            0.0
        };
        RankReport {
            rank: self.rank,
            input_index: self.input_index,
            file: self.file,
            gpu_time_us: gpu_time,
            busy_us: busy,
            wall_us: wall,
            launches,
            kernels,
            categories: None,
        }
    }
}

/// Groups the kernels of every rank by category (`--schema`). It works on
/// the per-kernel totals of the streaming pass, so each distinct kernel name
/// is classified once (the lookup is cached across ranks), not each launch.
pub fn apply_schema(ranks: &mut [RankReport], schema: &CategorySchema) {
    let mut rules: HashMap<String, Option<RuleId>> = HashMap::new();
    for rank in ranks.iter_mut() {
        let mut cats = RankCategories::default();
        let mut row_of: HashMap<String, usize> = HashMap::new();
        for k in &mut rank.kernels {
            // Trace names carry the `-v` shape (`name[SIMD16 {..} {..}]`,
            // `[bytes]` after memory commands) that schemas are not written
            // for; cut it as summary does (docs/compatibility.md#summary-6).
            let name = normalize_kernel_name(&k.name);
            let rule = match rules.get(name.as_ref()) {
                Some(&rule) => rule,
                None => {
                    let rule = schema.classify(&name);
                    rules.insert(name.to_string(), rule);
                    rule
                }
            };
            let category = match rule {
                Some(r) => schema.category_of(r),
                None => {
                    cats.unmatched_launches += k.count;
                    cats.unmatched_us += k.total_us;
                    cats.unmatched_names.push(name.into_owned());
                    DEFAULT_DEVICE_CATEGORY
                }
            };
            let i = *row_of.entry(category.to_string()).or_insert_with(|| {
                cats.rows.push(CategoryRow {
                    category: category.to_string(),
                    count: 0,
                    total_us: 0.0,
                    max_us: 0.0,
                });
                cats.rows.len() - 1
            });
            let row = &mut cats.rows[i];
            row.count += k.count;
            row.total_us += k.total_us;
            row.max_us = row.max_us.max(k.max_us);
            k.category = Some(category.to_string());
        }
        cats.rows.sort_by(|a, b| {
            b.total_us
                .total_cmp(&a.total_us)
                .then_with(|| a.category.cmp(&b.category))
        });
        cats.unmatched_names.sort();
        cats.unmatched_names.dedup();
        rank.categories = Some(cats);
    }
}

/// `args.id` of a device event: the kernel instance id, written as a JSON
/// string (docs/formats.md#trace-json-events).
fn args_id(ev: &Event<'_>) -> Option<u64> {
    let args = ev.value(Field::Args)?;
    if args.first() != Some(&b'{') {
        return None;
    }
    let (_, span) = object_members(args).find(|(k, _)| *k == b"id")?;
    let v = &args[span.range()];
    let digits = v
        .strip_prefix(b"\"")
        .and_then(|v| v.strip_suffix(b"\""))
        .unwrap_or(v);
    parse_u64(digits)
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn vs(value: f64, reference: f64) -> f64 {
    if reference > 0.0 {
        100.0 * (value - reference) / reference
    } else {
        0.0
    }
}

/// One kernel name over all ranks: count, total, max, time per host range.
type KernelTotals<'a> = (u64, f64, f64, HashMap<&'a str, f64>);

/// Human-readable report (stdout).
pub fn write_report(out: &mut impl Write, ranks: &[RankReport], top: usize) -> Result<()> {
    let med = median(&mut ranks.iter().map(|r| r.gpu_time_us).collect::<Vec<_>>());
    writeln!(
        out,
        "GPU time per rank ({} rank{}, median {:.3} ms):",
        ranks.len(),
        if ranks.len() == 1 { "" } else { "s" },
        med / 1e3
    )?;
    writeln!(
        out,
        "{:>6} {:>12} {:>12} {:>7} {:>9} {:>10}  file",
        "rank", "gpu_ms", "wall_ms", "busy_%", "launches", "vs_median"
    )?;
    for r in ranks {
        writeln!(
            out,
            "{:>6} {:>12.3} {:>12.3} {:>7.2} {:>9} {:>+9.1}%  {}",
            r.label(),
            r.gpu_time_us / 1e3,
            r.wall_us / 1e3,
            r.busy_pct(),
            r.launches,
            vs(r.gpu_time_us, med),
            r.file
        )?;
    }
    if let [only] = ranks {
        // One rank has nothing to compare with: no straggler to name. The
        // text is tracestat's median comparison of one rank, word for word
        // (docs/tracestat.md#stragglers).
        writeln!(
            out,
            "straggler: none: one rank, nothing to compare with (rank {}: {:.3} ms of GPU time)",
            only.label(),
            only.gpu_time_us / 1e3
        )?;
    } else if let Some(slow) = ranks.iter().max_by(|a, b| {
        a.gpu_time_us
            .total_cmp(&b.gpu_time_us)
            .then(b.input_index.cmp(&a.input_index))
    }) {
        writeln!(
            out,
            "straggler: rank {}: {:.3} ms of GPU time, {:+.1}% against the median rank ({:.3} ms)",
            slow.label(),
            slow.gpu_time_us / 1e3,
            vs(slow.gpu_time_us, med),
            med / 1e3
        )?;
    }
    write_categories(out, ranks)?;
    // Kernels over all ranks.
    let mut all: HashMap<&str, KernelTotals> = HashMap::new();
    let total: f64 = ranks.iter().fold(0.0, |acc, r| acc + r.gpu_time_us);
    for r in ranks {
        for k in &r.kernels {
            let e = all.entry(&k.name).or_default();
            e.0 += k.count;
            e.1 += k.total_us;
            e.2 = e.2.max(k.max_us);
            for (name, t) in &k.ranges {
                *e.3.entry(name).or_default() += t;
            }
        }
    }
    let mut rows: Vec<_> = all.into_iter().collect();
    rows.sort_by(|a, b| b.1 .1.total_cmp(&a.1 .1).then_with(|| a.0.cmp(b.0)));
    writeln!(out, "top kernels (all ranks, by device time):")?;
    writeln!(
        out,
        "{:>12} {:>7} {:>9} {:>11} {:>11}  kernel  [host range]",
        "total_ms", "share_%", "count", "mean_us", "max_us"
    )?;
    for (name, (count, t, max, ranges)) in rows.into_iter().take(top) {
        let range = ranges
            .into_iter()
            .max_by(|a, b| a.1.total_cmp(&b.1).then_with(|| b.0.cmp(a.0)))
            .map_or(NO_RANGE, |r| r.0);
        writeln!(
            out,
            "{:>12.3} {:>7.2} {:>9} {:>11.3} {:>11.3}  {}  [{}]",
            t / 1e3,
            pct(t, total),
            count,
            t / count.max(1) as f64,
            max,
            name,
            range
        )?;
    }
    Ok(())
}

/// `--schema` part of the report: per rank, device time per category, then
/// the share of the default category over all ranks. Nothing without a
/// schema.
fn write_categories(out: &mut impl Write, ranks: &[RankReport]) -> Result<()> {
    if ranks.iter().all(|r| r.categories.is_none()) {
        return Ok(());
    }
    writeln!(
        out,
        "device time by category (kernels no rule matches count as \"{DEFAULT_DEVICE_CATEGORY}\"):"
    )?;
    writeln!(
        out,
        "{:>6} {:>12} {:>7} {:>9} {:>11} {:>11}  category",
        "rank", "total_ms", "share_%", "count", "mean_us", "max_us"
    )?;
    let mut gpu_total = 0.0;
    let mut default_total = 0.0;
    let mut unmatched_us = 0.0;
    let mut unmatched_launches = 0;
    let mut unmatched_names: Vec<&str> = Vec::new();
    for r in ranks {
        let Some(cats) = &r.categories else { continue };
        let label = r.label();
        gpu_total += r.gpu_time_us;
        for c in &cats.rows {
            if c.category == DEFAULT_DEVICE_CATEGORY {
                default_total += c.total_us;
            }
            writeln!(
                out,
                "{:>6} {:>12.3} {:>7.2} {:>9} {:>11.3} {:>11.3}  {}",
                label,
                c.total_us / 1e3,
                pct(c.total_us, r.gpu_time_us),
                c.count,
                c.total_us / c.count.max(1) as f64,
                c.max_us,
                c.category
            )?;
        }
        unmatched_us += cats.unmatched_us;
        unmatched_launches += cats.unmatched_launches;
        unmatched_names.extend(cats.unmatched_names.iter().map(String::as_str));
    }
    unmatched_names.sort_unstable();
    unmatched_names.dedup();
    writeln!(
        out,
        "default category \"{DEFAULT_DEVICE_CATEGORY}\": {:.2}% of device time (all ranks); \
         no rule matched {} launch{} of {} kernel name{} ({:.2}% of device time)",
        pct(default_total, gpu_total),
        unmatched_launches,
        if unmatched_launches == 1 { "" } else { "es" },
        unmatched_names.len(),
        if unmatched_names.len() == 1 { "" } else { "s" },
        pct(unmatched_us, gpu_total)
    )?;
    Ok(())
}

/// CSV: one `rank` row per rank, then (with `--schema`) its `category`
/// rows, then its `kernel` rows. With a schema a `category` column follows
/// `kernel`; without one the columns are unchanged.
pub fn write_csv(out: impl Write + Send, ranks: &[RankReport]) -> Result<()> {
    write_table(out, TableFormat::Csv, ranks).map(drop)
}

/// The `--stats` columns as typed for Parquet (docs/formats.md#parquet-tables):
/// `rank` is a string because a file without a rank is labelled `#N`;
/// fields a row kind leaves empty are nulls.
pub fn stats_schema(with_categories: bool) -> Schema {
    let mut columns = vec![
        Column::utf8("row"),
        Column::utf8("rank"),
        Column::utf8("file"),
        Column::utf8("kernel").nullable(),
    ];
    if with_categories {
        columns.push(Column::utf8("category").nullable());
    }
    columns.extend([
        Column::int64("count"),
        Column::float64("total_us"),
        Column::float64("mean_us").nullable(),
        Column::float64("max_us").nullable(),
        Column::float64("gpu_share_pct").nullable(),
        Column::float64("wall_us").nullable(),
        Column::float64("gpu_busy_pct").nullable(),
        Column::float64("vs_median_pct").nullable(),
        Column::utf8("host_range").nullable(),
        Column::float64("host_range_share_pct").nullable(),
    ]);
    Schema::new(columns)
}

/// The `--stats` table as CSV or Parquet into `out`, which is returned.
pub fn write_table<W: Write + Send>(
    out: W,
    format: TableFormat,
    ranks: &[RankReport],
) -> Result<W> {
    let med = median(&mut ranks.iter().map(|r| r.gpu_time_us).collect::<Vec<_>>());
    let with_categories = ranks.iter().any(|r| r.categories.is_some());
    let mut w = TableWriter::new(out, format, &stats_schema(with_categories))?;
    // Writes a record, dropping the `category` field (index 4) when no
    // schema was given.
    let mut write = |mut record: [&str; 15]| -> Result<()> {
        if with_categories {
            w.write_record(record)?;
        } else {
            record[4..].rotate_left(1);
            w.write_record(&record[..14])?;
        }
        Ok(())
    };
    let f3 = |v: f64| format!("{v:.3}");
    let f2 = |v: f64| format!("{v:.2}");
    for r in ranks {
        let label = r.label();
        write([
            "rank",
            &label,
            &r.file,
            "",
            "",
            &r.launches.to_string(),
            &f3(r.gpu_time_us),
            "",
            "",
            "",
            &f3(r.wall_us),
            &f2(r.busy_pct()),
            &format!("{:.1}", vs(r.gpu_time_us, med)),
            "",
            "",
        ])?;
        for c in r.categories.iter().flat_map(|c| &c.rows) {
            write([
                "category",
                &label,
                &r.file,
                "",
                &c.category,
                &c.count.to_string(),
                &f3(c.total_us),
                &f3(c.total_us / c.count.max(1) as f64),
                &f3(c.max_us),
                &f2(pct(c.total_us, r.gpu_time_us)),
                "",
                "",
                "",
                "",
                "",
            ])?;
        }
        for k in &r.kernels {
            let (range, rt) = k
                .ranges
                .first()
                .map_or((NO_RANGE, 0.0), |(n, t)| (n.as_str(), *t));
            write([
                "kernel",
                &label,
                &r.file,
                &k.name,
                k.category.as_deref().unwrap_or(""),
                &k.count.to_string(),
                &f3(k.total_us),
                &f3(k.total_us / k.count.max(1) as f64),
                &f3(k.max_us),
                &f2(pct(k.total_us, r.gpu_time_us)),
                "",
                "",
                "",
                range,
                &f2(pct(rt, k.total_us)),
            ])?;
        }
    }
    Ok(w.finish()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use unitrace_core::trace::TraceReader;

    fn run(trace: &str) -> RankReport {
        let mut st = RankStats::new(Some(0), 0, Path::new("t.json"));
        let mut r = TraceReader::new(trace.as_bytes());
        while let Some(ev) = r.next_event().unwrap() {
            st.feed(&ev);
        }
        st.finish()
    }

    #[test]
    fn a_rank_without_kernels_has_zero_not_negative_zero_gpu_time() {
        let report = run(r#"{"traceEvents":[
{"ph": "X", "tid": 1, "pid": 1, "name": "host", "cat": "cpu_op", "ts": 100.0, "dur": 1.0}
]}"#);
        assert!(report.gpu_time_us.is_sign_positive());
    }

    #[test]
    fn negative_durations_and_infinite_times_are_left_out() {
        let t = r#"{"traceEvents":[
{"ph": "X", "tid": 9, "pid": 9, "name": "gemm", "cat": "gpu_op", "ts": 200.0, "dur": 10.0},
{"ph": "X", "tid": 9, "pid": 9, "name": "gemm", "cat": "gpu_op", "ts": 220.0, "dur": -10.0},
{"ph": "X", "tid": 9, "pid": 9, "name": "gemm", "cat": "gpu_op", "ts": 1e400, "dur": 1.0},
{"ph": "X", "tid": 1, "pid": 1, "name": "host", "cat": "cpu_op", "ts": 100.0, "dur": 1e400}
]}"#;
        let mut st = RankStats::new(Some(0), 0, Path::new("t.json"));
        let mut r = TraceReader::new(t.as_bytes());
        while let Some(ev) = r.next_event().unwrap() {
            st.feed(&ev);
        }
        assert_eq!(st.invalid_times(), 3);
        let report = st.finish();
        assert_eq!(report.launches, 1);
        assert_eq!(report.gpu_time_us, 10.0);
    }

    #[test]
    fn kernel_times_busy_and_host_ranges() {
        // Two kernels overlapping on two engines, submitted under nested
        // host ranges (X outer, B/E inner); one without a flow.
        let t = r#"{"traceEvents":[
{"ph": "M", "name": "process_name", "pid": 1, "ts": 0.0, "args": {"name": "HOST"}},
{"ph": "X", "tid": 1, "pid": 1, "name": "PyTorch::aten::linear", "cat": "cpu_op", "ts": 100.0, "dur": 50.0, "id": 0},
{"ph": "B", "tid": 1, "pid": 1, "name": "dnnl::primitive::execute::matmul", "cat": "cpu_op", "ts": 110.0},
{"ph": "s", "tid": 1, "pid": 1, "name": "dep", "cat": "Flow_H2D_1_0", "ts": 111.0, "id": 1},
{"ph": "E", "tid": 1, "pid": 1, "name": "dnnl::primitive::execute::matmul", "cat": "cpu_op", "ts": 120.0},
{"ph": "s", "tid": 1, "pid": 1, "name": "dep", "cat": "Flow_H2D_2_0", "ts": 130.0, "id": 2},
{"ph": "X", "tid": 9, "pid": 9, "name": "gemm", "cat": "gpu_op", "ts": 200.0, "dur": 10.0, "args": {"id": "1"}},
{"ph": "X", "tid": 8, "pid": 9, "name": "gemm", "cat": "gpu_op", "ts": 205.0, "dur": 30.0, "args": {"id": "2"}},
{"ph": "X", "tid": 9, "pid": 9, "name": "copy", "cat": "gpu_op", "ts": 300.0, "dur": 20.0, "args": {"id": "3"}}
]}"#;
        let r = run(t);
        assert_eq!(r.launches, 3);
        assert_eq!(r.gpu_time_us, 60.0);
        assert_eq!(r.busy_us, 55.0); // [200,235] + [300,320]
        assert_eq!(r.wall_us, 220.0); // 100 .. 320
        let gemm = &r.kernels[0];
        assert_eq!(
            (gemm.name.as_str(), gemm.count, gemm.total_us, gemm.max_us),
            ("gemm", 2, 40.0, 30.0)
        );
        assert_eq!(gemm.ranges[0], ("PyTorch::aten::linear".to_string(), 30.0));
        assert_eq!(
            gemm.ranges[1],
            ("dnnl::primitive::execute::matmul".to_string(), 10.0)
        );
        assert_eq!(r.kernels[1].ranges[0].0, "(none)");
        let mut csv = Vec::new();
        write_csv(&mut csv, std::slice::from_ref(&r)).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        assert!(
            csv.contains("rank,0,t.json,,3,60.000,,,,220.000,25.00,0.0,,\n"),
            "{csv}"
        );
        assert!(csv.contains("kernel,0,t.json,gemm,2,40.000,20.000,30.000,66.67,,,,PyTorch::aten::linear,75.00\n"), "{csv}");
        let mut rep = Vec::new();
        write_report(&mut rep, &[r], 5).unwrap();
        let rep = String::from_utf8(rep).unwrap();
        assert!(
            rep.contains(
                "\nstraggler: none: one rank, nothing to compare with (rank 0: 0.060 ms of GPU time)\n"
            ),
            "{rep}"
        );
        assert!(!rep.contains("straggler: rank"), "{rep}");
    }

    #[test]
    fn median_and_straggler() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(vs(150.0, 100.0), 50.0);
    }
}
