//! The steps of one rank (docs/tracestat.md#steps): where each training or
//! inference step starts and ends, found once per rank from what the
//! input pass kept ([`RankTrace`]), before the rank is prepared for the
//! analyzers, and which of them a run keeps (`--steps`, `--skip-warmup`).
//!
//! Three rules, tried in order, the first that finds steps wins:
//! 1. **marker**: host ranges whose name matches `--step REGEX` (default
//!    [`DEFAULT_STEP_PATTERN`]);
//! 2. **top-level range**: a host range name repeated at the top level of
//!    one thread whose instances tile the run;
//! 3. **GPU period**: the period of the operation sequence of the busiest
//!    device engine.
//!
//! [`find`] applies them; [`select`] keeps the steps asked for. The result,
//! [`RankSteps`], is what the rank model carries (`RankModel::steps`), so
//! every analyzer reads the same windows. Memory: one [`StepWindow`] per
//! step, plus, for the GPU-period rule, one name per operation of one engine
//! while it runs.

use std::collections::BTreeMap;

use regex::Regex;
use rustc_hash::FxHashMap as FastMap;
use serde::{Deserialize, Serialize};
use unitrace_core::timeline::NameId;

use crate::ingest::RankTrace;
use crate::time::Ns;

/// The step marker when `--step` is not given: PyTorch's `ProfilerStep#N`
/// anywhere in a range name (Kineto's `ProfilerStep#3`, unitrace's ITT
/// `PyTorch::ProfilerStep#3`).
pub const DEFAULT_STEP_PATTERN: &str = r"ProfilerStep#(\d+)";

/// The fallback rules need at least this many steps.
pub const MIN_DETECTED_STEPS: usize = 3;

/// A repeated top-level range counts as the step when its instances cover
/// at least this share of the stretch from the first one's start to the
/// last one's end.
pub const TOP_LEVEL_COVER: f64 = 0.8;

/// A period of the GPU operation sequence is accepted when at most this
/// share of the positions compared differ.
pub const PERIOD_MISMATCH: f64 = 0.01;
/// Periods compared at least for a period with a few anomalies to fit ...
pub const ANOMALY_PERIODS: usize = 5;
/// ... and at most this many stretches of mismatches (see `fits`) ...
pub const ANOMALIES: usize = 2;
/// ... each of at most the period's length and this many: operations more
/// or fewer in a step at one place.
pub const ANOMALY_OPS: usize = 3;
/// Names that mark the start of a step when the GPU period places them.
const SIGNATURE: usize = 4;

/// `--skip-warmup`: a leading step is warm-up while its duration differs
/// from the median of the steps after it by more than this share.
pub const WARMUP_TOLERANCE: f64 = 0.2;

/// One step of one rank: its id and its time window (trace nanoseconds,
/// the rank's own clock; `end_ns` excluded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepWindow {
    pub step: u64,
    pub start_ns: Ns,
    pub end_ns: Ns,
    /// The host thread whose range marks the step (the marker and
    /// top-level-range rules; of several instances, the one that ends
    /// last): the critical path cuts that thread's time at the step's end
    /// (docs/tracestat.md#critical-path). `None` for GPU-period steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tid: Option<u64>,
}

impl StepWindow {
    pub fn dur_ns(&self) -> Ns {
        self.end_ns - self.start_ns
    }
}

/// Which rule found a rank's steps (docs/tracestat.md#steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepRule {
    /// Not looked for (a rank of a partial written before steps existed).
    #[default]
    NotRecorded,
    Marker,
    TopLevelRange,
    /// Top-level ranges that repeat as a sequence of names.
    TopLevelSequence,
    GpuPeriod,
    /// No rule found steps.
    None,
}

impl StepRule {
    pub fn as_str(self) -> &'static str {
        match self {
            StepRule::NotRecorded => "not-recorded",
            StepRule::Marker => "marker",
            StepRule::TopLevelRange => "top-level-range",
            StepRule::TopLevelSequence => "top-level-sequence",
            StepRule::GpuPeriod => "gpu-period",
            StepRule::None => "none",
        }
    }
}

/// `--steps LIST`: step ids, `3-10`, `0,2,5-7` or `2 4` (the grammar of
/// `--ranks`, for step ids).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepList(pub Vec<(u64, u64)>);

impl StepList {
    /// Parses the values of `--steps`; the error names the bad item.
    pub fn parse<S: AsRef<str>>(values: &[S]) -> Result<StepList, String> {
        let mut ranges = Vec::new();
        for value in values {
            for item in value.as_ref().split([',', ' ', '\t']).map(str::trim) {
                if item.is_empty() {
                    continue;
                }
                let (a, b) = item.split_once('-').unwrap_or((item, item));
                let num = |s: &str| {
                    s.trim()
                        .parse::<u64>()
                        .map_err(|_| format!("'{item}' is not a step or a range a-b"))
                };
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("'{item}' is an empty range"));
                }
                ranges.push((a, b));
            }
        }
        if ranges.is_empty() {
            return Err("no step given".to_string());
        }
        Ok(StepList(ranges))
    }

    pub fn contains(&self, step: u64) -> bool {
        self.0.iter().any(|&(a, b)| (a..=b).contains(&step))
    }
}

/// What a run asks of steps (part of `RankOptions`: partials made with
/// other step options do not combine).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepOptions {
    /// `--step REGEX` (`None`: [`DEFAULT_STEP_PATTERN`]).
    #[serde(default)]
    pub pattern: Option<String>,
    /// `--steps LIST`.
    #[serde(default)]
    pub keep: Option<StepList>,
    /// `--skip-warmup`.
    #[serde(default)]
    pub skip_warmup: bool,
}

impl StepOptions {
    /// The marker pattern as written.
    pub fn pattern_text(&self) -> &str {
        self.pattern.as_deref().unwrap_or(DEFAULT_STEP_PATTERN)
    }

    /// The marker pattern compiled: once per pattern and process, not
    /// once per rank (compiling it was about half of the per-rank cost of
    /// small ranks: docs/tracestat.md#many-ranks); a clone shares the
    /// compiled program.
    pub fn regex(&self) -> Result<Regex, regex::Error> {
        static COMPILED: std::sync::Mutex<Option<(String, Regex)>> = std::sync::Mutex::new(None);
        let pattern = self.pattern_text();
        let mut cached = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, r)) = cached.as_ref().filter(|(p, _)| p == pattern) {
            return Ok(r.clone());
        }
        let compiled = Regex::new(pattern)?;
        *cached = Some((pattern.to_string(), compiled.clone()));
        Ok(compiled)
    }

    /// Whether the other analyses see only the kept steps.
    pub fn selects(&self) -> bool {
        self.keep.is_some() || self.skip_warmup
    }
}

/// Every step a rule found on one rank, in time order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FoundSteps {
    pub rule: StepRule,
    /// What the rule went by: the marker pattern, the repeated range's
    /// name, or the period and the engine of the GPU rule.
    pub source: String,
    pub steps: Vec<StepWindow>,
}

/// A rank's steps after the selection: what the rank model carries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankSteps {
    pub rule: StepRule,
    pub source: String,
    /// Steps the rule found.
    pub found: u64,
    /// Ids `--skip-warmup` dropped, in time order.
    pub warmup: Vec<u64>,
    /// With `--skip-warmup` and steps kept: whether the step time settled
    /// (`false`: it never did, and nothing was dropped).
    pub warmup_settled: Option<bool>,
    /// Without `--skip-warmup`: the leading steps it would drop, which the
    /// report's slowest-step line names when it is one of them.
    pub warmup_seen: Vec<u64>,
    /// Whether the run restricts the analyses to the kept steps.
    pub selecting: bool,
    /// The steps kept, in time order.
    pub kept: Vec<StepWindow>,
}

impl RankSteps {
    /// From the first kept step's start to the last one's end: the stretch
    /// the other analyses see when the run selects steps (`None` when none
    /// is kept).
    pub fn span(&self) -> Option<(Ns, Ns)> {
        let start = self.kept.iter().map(|s| s.start_ns).min()?;
        let end = self.kept.iter().map(|s| s.end_ns).max()?;
        Some((start, end))
    }
}

/// A rank's steps by the first rule that finds some (docs/tracestat.md#steps).
pub fn find(trace: &RankTrace, marker: Option<&Regex>) -> FoundSteps {
    if let Some(re) = marker {
        let steps = by_marker(trace, re);
        if !steps.is_empty() {
            return FoundSteps {
                rule: StepRule::Marker,
                source: re.as_str().to_string(),
                steps,
            };
        }
    }
    if let Some((rule, name, steps)) = by_top_level_range(trace) {
        return FoundSteps {
            rule,
            source: name,
            steps,
        };
    }
    if let Some((source, steps)) = by_gpu_period(trace) {
        return FoundSteps {
            rule: StepRule::GpuPeriod,
            source,
            steps,
        };
    }
    FoundSteps {
        rule: StepRule::None,
        source: String::new(),
        steps: Vec::new(),
    }
}

/// Rule 1: host ranges whose name matches `re`. The id is the first
/// capture group read as a number; without one (or when it is no number)
/// the instance's position in time order among the matches. Instances
/// with the same id (on several threads) make one step from the earliest
/// start to the latest end.
fn by_marker(trace: &RankTrace, re: &Regex) -> Vec<StepWindow> {
    // Each name is matched once: `Some(Some(id))`, `Some(None)` (matches,
    // no id), `None` (no match).
    let mut verdicts: FastMap<NameId, Option<Option<u64>>> = FastMap::default();
    let mut hits: Vec<(Ns, Ns, u64, Option<u64>)> = Vec::new();
    for h in &trace.host {
        let v = *verdicts.entry(h.name).or_insert_with(|| {
            let caps = re.captures(trace.name(h.name))?;
            Some(caps.get(1).and_then(|g| g.as_str().parse::<u64>().ok()))
        });
        if let Some(id) = v {
            hits.push((h.start, h.end, h.tid, id));
        }
    }
    hits.sort_unstable_by_key(|h| (h.0, h.1, h.2));
    // Per id: (start, end, thread of the instance that ends last).
    let mut by_id: BTreeMap<u64, (Ns, Ns, u64)> = BTreeMap::new();
    for (i, (s, e, tid, id)) in hits.into_iter().enumerate() {
        let w = by_id.entry(id.unwrap_or(i as u64)).or_insert((s, e, tid));
        w.0 = w.0.min(s);
        if e > w.1 {
            w.1 = e;
            w.2 = tid;
        }
    }
    let mut steps: Vec<StepWindow> = by_id
        .into_iter()
        .map(|(step, (start_ns, end_ns, tid))| StepWindow {
            step,
            start_ns,
            end_ns,
            tid: Some(tid),
        })
        .collect();
    steps.sort_unstable_by_key(|s| (s.start_ns, s.step));
    steps
}

/// Rule 2: the host ranges that no other range of their thread encloses,
/// grouped by (thread, name); a group of at least [`MIN_DETECTED_STEPS`]
/// instances whose durations cover at least [`TOP_LEVEL_COVER`] of the
/// stretch from its first start to its last end is a step candidate; the
/// candidate covering the most time wins (ties: more instances, then the
/// name). Steps are numbered 0, 1, ... in time order.
fn by_top_level_range(trace: &RankTrace) -> Option<(StepRule, String, Vec<StepWindow>)> {
    // Each thread's ranges `(start, end, name)` in lists sized exactly: a
    // rank has millions, and growing the lists was half this rule's time.
    let mut counts: FastMap<u64, usize> = FastMap::default();
    for h in &trace.host {
        *counts.entry(h.tid).or_default() += 1;
    }
    let mut by_tid: FastMap<u64, Vec<(Ns, Ns, NameId)>> = (counts.into_iter())
        .map(|(tid, n)| (tid, Vec::with_capacity(n)))
        .collect();
    for h in &trace.host {
        if let Some(list) = by_tid.get_mut(&h.tid) {
            list.push((h.start, h.end, h.name));
        }
    }
    // (time covered, instances, name, spans, thread) of the best group so far.
    type Group = (Ns, usize, String, Vec<(Ns, Ns)>, u64);
    let mut best: Option<Group> = None;
    let mut tids: Vec<u64> = by_tid.keys().copied().collect();
    tids.sort_unstable();
    // Per thread, its top-level ranges in time order.
    let mut sequences: Vec<ThreadRanges> = Vec::new();
    for tid in tids {
        let mut ranges = by_tid.remove(&tid).unwrap_or_default();
        // By start, the longer first, then by name: one order whatever the
        // sort does with ties.
        ranges.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        let mut groups: FastMap<NameId, Vec<(Ns, Ns)>> = FastMap::default();
        let mut open_end: Option<Ns> = None;
        let mut top = Vec::new();
        for &(start, end, name) in &ranges {
            if open_end.is_some_and(|e| start < e) {
                continue; // inside the top-level range still open
            }
            open_end = Some(end);
            groups.entry(name).or_default().push((start, end));
            top.push((start, end, name));
        }
        sequences.push((tid, top));
        for (name, spans) in groups {
            if spans.len() < MIN_DETECTED_STEPS {
                continue;
            }
            let covered: Ns = spans.iter().map(|s| s.1 - s.0).sum();
            let stretch = spans.last().map_or(0, |l| l.1) - spans[0].0;
            if stretch <= 0 || (covered as f64) < TOP_LEVEL_COVER * stretch as f64 {
                continue;
            }
            let name = trace.name(name).to_string();
            let better = match &best {
                None => true,
                Some((c, n, b, _, _)) => {
                    (covered, spans.len(), std::cmp::Reverse(&name))
                        > (*c, *n, std::cmp::Reverse(b))
                }
            };
            if better {
                best = Some((covered, spans.len(), name, spans, tid));
            }
        }
    }
    let Some((_, _, name, spans, tid)) = best else {
        let (source, steps) = by_top_level_sequence(trace, &sequences)?;
        return Some((StepRule::TopLevelSequence, source, steps));
    };
    let steps = spans
        .into_iter()
        .enumerate()
        .map(|(i, (start_ns, end_ns))| StepWindow {
            step: i as u64,
            start_ns,
            end_ns,
            tid: Some(tid),
        })
        .collect();
    Some((StepRule::TopLevelRange, name, steps))
}

/// A thread and its top-level ranges `(start, end, name)` in time order.
type ThreadRanges = (u64, Vec<(Ns, Ns, NameId)>);

/// Rule 2 when no one range repeats so: a thread whose top-level ranges
/// repeat as a sequence of names (`forward`, `backward`, `optimizer`, ...),
/// its period found as the GPU period's is (at least 2 ranges, at least
/// [`MIN_DETECTED_STEPS`] periods), on a thread that calls the runtime
/// and whose top-level ranges cover [`TOP_LEVEL_COVER`] of the span of its
/// loop (from the first to the last range of a name that repeats, so that
/// a set-up range and the idle time after it do not count),
/// whose steps' ranges cover at least
/// [`TOP_LEVEL_COVER`] of the stretch from the first step's start to the
/// last one's end; the thread whose steps cover the most time wins. A step
/// starts with the phase of the loop's first range and ends with the
/// last range before the next step. The source names the sequence.
fn by_top_level_sequence(
    trace: &RankTrace,
    sequences: &[ThreadRanges],
) -> Option<(String, Vec<StepWindow>)> {
    // (time covered, source, steps) of the best thread so far.
    let mut best: Option<(Ns, String, Vec<StepWindow>)> = None;
    for (tid, top) in sequences {
        // The loop's ranges: from the first to the last range of a name
        // that repeats; a set-up range before the loop (loading a model)
        // and the idle time after it are no part of it.
        let top = repeated_stretch(top);
        // The thread's top-level ranges cover 80% of that span, as its
        // steps' must of theirs: checked first, as the period's search on a
        // thread of a million ranges cost 4% of a report (at half, still
        // 3.9% on the bench files).
        let all: Ns = top.iter().map(|r| r.1 - r.0).sum();
        let span = top.last().map_or(0, |l| l.1) - top.first().map_or(0, |f| f.0);
        if span <= 0 || (all as f64) < TOP_LEVEL_COVER * span as f64 {
            continue;
        }
        let names: Vec<NameId> = top.iter().map(|r| r.2).collect();
        let Some(period) = shortest_period(&names).filter(|&d| d >= 2) else {
            continue;
        };
        // A step's sequence is on the thread that drives the device (it
        // calls the runtime), not a helper thread's own loop. Looked up
        // only for a thread with a period: a set of every call's thread
        // cost 4% of a report.
        if !trace.api.iter().any(|a| a.tid == *tid) {
            continue;
        }
        let (a, _) = clean_stretch(&names, period);
        // A step starts with the phase the loop's first range is of: the
        // profiler starts with a step (the loop inside it), where host
        // ranges follow each other with no idle time that tells a step's
        // first phase on every rank alike.
        let phase = (0..period).find(|&p| names[a + p] == names[0]).unwrap_or(0);
        let starts = step_starts(&names, period, a + phase);
        let anchor = a + phase;
        let mut steps = Vec::new();
        let mut covered = 0;
        for (k, &first) in starts.iter().enumerate() {
            // The last step: a whole period of ranges.
            let last = match starts.get(k + 1) {
                Some(&next) => next,
                None if first + period <= top.len() => first + period,
                None => break,
            };
            let ranges = &top[first..last];
            covered += ranges.iter().map(|r| r.1 - r.0).sum::<Ns>();
            steps.push(StepWindow {
                step: k as u64,
                start_ns: top[first].0,
                end_ns: ranges.iter().map(|r| r.1).max().unwrap_or(top[first].1),
                tid: Some(*tid),
            });
        }
        let stretch =
            steps.last().map_or(0, |l| l.end_ns) - steps.first().map_or(0, |f| f.start_ns);
        if steps.len() < MIN_DETECTED_STEPS
            || stretch <= 0
            || (covered as f64) < TOP_LEVEL_COVER * stretch as f64
        {
            continue;
        }
        if best.as_ref().is_none_or(|b| covered > b.0) {
            let phases: Vec<&str> = (names.iter().skip(anchor).take(period))
                .map(|&n| trace.name(n))
                .collect();
            best = Some((covered, phases.join(", "), steps));
        }
    }
    best.map(|(_, source, steps)| (source, steps))
}

/// A thread's top-level ranges from the first to the last whose name
/// occurs at least [`MIN_DETECTED_STEPS`] times (none when no name does).
fn repeated_stretch(top: &[(Ns, Ns, NameId)]) -> &[(Ns, Ns, NameId)] {
    let mut counts: FastMap<NameId, usize> = FastMap::default();
    for r in top {
        *counts.entry(r.2).or_default() += 1;
    }
    let repeats = |r: &(Ns, Ns, NameId)| counts.get(&r.2).is_some_and(|&n| n >= MIN_DETECTED_STEPS);
    match (top.iter().position(repeats), top.iter().rposition(repeats)) {
        (Some(a), Some(b)) => &top[a..=b],
        _ => &[],
    }
}

/// Rule 3: the period of the busiest engine's operation sequence (the
/// device thread with the most operations, ordered by start). A period
/// `d` (in operations) fits when, from a third of the way in to the end,
/// the name `d` operations later is the same name at all but
/// [`PERIOD_MISMATCH`] of the positions; the shortest fitting period of
/// at most a third of the operations wins (candidates: the distances
/// between the operation in the middle with the rarest name and the
/// other operations of that name). Steps start at the operations where the
/// idle time before them, summed over the periods, is largest; a step ends
/// where the next one starts (the last one at the end of its last
/// operation). Steps are numbered 0, 1, ... in time order.
fn by_gpu_period(trace: &RankTrace) -> Option<(String, Vec<StepWindow>)> {
    let mut counts: FastMap<(u32, u64), usize> = FastMap::default();
    for k in &trace.kernels {
        *counts.entry((k.device, k.tid)).or_default() += 1;
    }
    let (&engine, &n) = counts
        .iter()
        .max_by_key(|(key, n)| (**n, std::cmp::Reverse(**key)))?;
    if n < 2 * MIN_DETECTED_STEPS {
        return None;
    }
    let mut ops: Vec<(Ns, Ns, NameId)> = trace
        .kernels
        .iter()
        .filter(|k| (k.device, k.tid) == engine)
        .map(|k| (k.start, k.end, k.name))
        .collect();
    ops.sort_unstable_by_key(|o| (o.0, o.1));
    let names: Vec<NameId> = ops.iter().map(|o| o.2).collect();
    let period = shortest_period(&names)?;
    let (a, b) = clean_stretch(&names, period);
    let anchor = a + quietest_phase(&ops[a..b], period);
    let starts = step_starts(&names, period, anchor);
    let mut steps = Vec::new();
    for (k, &first) in starts.iter().enumerate() {
        let end_ns = match starts.get(k + 1) {
            Some(&next) => ops[next].0,
            // The last step: a whole period of operations, ending with
            // the latest of them.
            None if first + period <= n => ops[first..first + period]
                .iter()
                .map(|o| o.1)
                .max()
                .unwrap_or(ops[first].0),
            None => break,
        };
        steps.push(StepWindow {
            step: steps.len() as u64,
            start_ns: ops[first].0,
            end_ns,
            tid: None,
        });
    }
    if steps.len() < MIN_DETECTED_STEPS {
        return None;
    }
    let device = trace
        .devices
        .get(engine.0 as usize)
        .map_or_else(|| format!("device {}", engine.0), |d| d.label.clone());
    let source = format!(
        "every {period} operations of engine {} of {device}",
        engine.1
    );
    Some((source, steps))
}

/// The shortest period of a name sequence by the rule of [`by_gpu_period`].
pub fn shortest_period(names: &[NameId]) -> Option<usize> {
    let n = names.len();
    let max_period = n / MIN_DETECTED_STEPS;
    if max_period == 0 {
        return None;
    }
    let mut counts: FastMap<NameId, usize> = FastMap::default();
    for &name in names {
        *counts.entry(name).or_default() += 1;
    }
    let middle = n / 2;
    // The rarest name near the middle that recurs in every step at all: an
    // operation of one step only (a slow step's extra kernel) has no
    // distance to itself to try.
    let pivot = (middle..n.min(middle + 64))
        .filter(|&i| counts[&names[i]] >= MIN_DETECTED_STEPS)
        .min_by_key(|&i| (counts[&names[i]], i))?;
    let lo = pivot.saturating_sub(max_period);
    let hi = n.min(pivot + max_period + 1);
    let mut candidates: Vec<usize> = (lo..hi)
        .filter(|&j| j != pivot && names[j] == names[pivot])
        .map(|j| j.abs_diff(pivot))
        .collect();
    candidates.sort_unstable();
    candidates.dedup();
    // `d <= n / 3`, so `from + d <= n`.
    let from = n / 3;
    // A period that fits as it is before one that fits with anomalies: the
    // step's, rather than a layer's that differs at few step boundaries.
    let fitting = |tolerate: bool| {
        candidates
            .iter()
            .copied()
            .find(|&d| n - d > from && fits(&names[from..], d, tolerate))
    };
    fitting(false).or_else(|| fitting(true))
}

/// Whether `d` is a period of `names`: the name `d` later is the same at
/// all but [`PERIOD_MISMATCH`] of the positions, or, over at least
/// [`ANOMALY_PERIODS`] periods, the positions that differ lie in at most
/// [`ANOMALIES`] stretches (mismatches less than `d` apart) of at most `d +`
/// [`ANOMALY_OPS`] mismatches each (`tolerate`): an operation more or less
/// in one or two steps (a slow step's extra kernel) shifts the positions of
/// one period, where a shorter period inside the step (a repeated layer)
/// differs once in every step, by the step's own operations between the
/// layers, and a sequence without a period differs throughout
/// (docs/tracestat.md#steps).
fn fits(names: &[NameId], d: usize, tolerate: bool) -> bool {
    let compared = names.len() - d;
    let allowed = (PERIOD_MISMATCH * compared as f64) as usize;
    let mut tolerant = tolerate && compared >= ANOMALY_PERIODS * d;
    let mut mismatches = 0;
    let mut runs = 0;
    // The current stretch of mismatches: its last position and its count.
    let mut run: Option<(usize, usize)> = None;
    for i in 0..compared {
        if names[i] == names[i + d] {
            continue;
        }
        mismatches += 1;
        run = match run {
            Some((last, count)) if i - last < d => Some((i, count + 1)),
            _ => {
                runs += 1;
                Some((i, 1))
            }
        };
        if run.is_some_and(|(_, count)| count > d + ANOMALY_OPS) || runs > ANOMALIES {
            tolerant = false;
        }
        if mismatches > allowed && !tolerant {
            return false;
        }
    }
    true
}

/// The longest stretch of operations `a..b` in which every operation's
/// name recurs `period` later (the whole sequence when the period holds
/// throughout): where the step's first operation is sought, away from an
/// operation more or less.
fn clean_stretch(names: &[NameId], period: usize) -> (usize, usize) {
    let n = names.len();
    let (mut best, mut from) = ((0, 0), 0);
    for i in 0..=n - period {
        if i == n - period || names[i] != names[i + period] {
            if i - from > best.1 - best.0 {
                best = (from, i);
            }
            from = i + 1;
        }
    }
    // The stretch's positions, and the period after its last one.
    (best.0, (best.1 + period).min(n))
}

/// Where each step starts: from the `anchor` operation, a period later
/// and earlier, each at the nearest operation (within half a period) that
/// begins like the anchor's step (its first [`SIGNATURE`] names), so an
/// operation more or less moves the steps after it by one, not all
/// boundaries after it; at the position a period on where none does. In
/// time order.
fn step_starts(names: &[NameId], period: usize, anchor: usize) -> Vec<usize> {
    let n = names.len();
    let sig_len = SIGNATURE.min(period).min(n - anchor);
    let sig = &names[anchor..anchor + sig_len];
    let begins = |j: usize| names.get(j..j + sig_len) == Some(sig);
    let nearest = |x: usize| {
        (0..=period / 2)
            .flat_map(|k| [x.checked_add(k), x.checked_sub(k)])
            .flatten()
            .find(|&j| j < n && begins(j))
    };
    let mut before = Vec::new();
    let mut s = anchor;
    while let Some(x) = s.checked_sub(period) {
        let j = nearest(x).filter(|&j| j < s).unwrap_or(x);
        before.push(j);
        s = j;
    }
    let mut starts: Vec<usize> = before.into_iter().rev().collect();
    starts.push(anchor);
    let mut s = anchor;
    while s + period < n {
        let x = s + period;
        let j = nearest(x).filter(|&j| j > s).unwrap_or(x);
        starts.push(j);
        s = j;
    }
    starts
}

/// The offset in `0..period` whose operations have the most idle time
/// before them (from the latest end of the operations before), summed
/// over the periods; ties: the smallest offset.
fn quietest_phase(ops: &[(Ns, Ns, NameId)], period: usize) -> usize {
    let mut idle: Vec<Ns> = vec![0; period];
    let mut latest_end: Option<Ns> = None;
    for (i, &(start, end, _)) in ops.iter().enumerate() {
        if let Some(e) = latest_end {
            idle[i % period] += (start - e).max(0);
        }
        latest_end = Some(latest_end.map_or(end, |e| e.max(end)));
    }
    let mut best = 0;
    for (k, &t) in idle.iter().enumerate() {
        if t > idle[best] {
            best = k;
        }
    }
    best
}

/// A step is an outlier of its rank when its length is further from the
/// rank's median than this many robust standard deviations (1.4826 x the
/// median absolute deviation) ...
pub const OUTLIER_MADS: f64 = 3.0;
/// ... and further than this share of the median.
pub const OUTLIER_MIN_SHARE: f64 = 0.1;

/// Whether each step of a rank is an outlier (docs/tracestat.md#steps):
/// further from the median than [`OUTLIER_MADS`] robust standard
/// deviations and than [`OUTLIER_MIN_SHARE`] of the median.
pub fn outliers(durations: &[f64]) -> Vec<bool> {
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => 0.0,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    };
    let med = median(&mut durations.to_vec());
    let mut deviations: Vec<f64> = durations.iter().map(|d| (d - med).abs()).collect();
    let mad = median(&mut deviations);
    let limit = (OUTLIER_MADS * 1.4826 * mad).max(OUTLIER_MIN_SHARE * med);
    durations.iter().map(|d| (d - med).abs() > limit).collect()
}

/// How many leading steps `--skip-warmup` drops (docs/tracestat.md#steps):
/// a leading step is warm-up while its duration differs from the settled
/// step time by more than [`WARMUP_TOLERANCE`]; the first step within it
/// ends the warm-up, and the last step is never dropped. The settled step
/// time is the median of the rank's steps that are no [`outliers`]: the
/// median of the steps after each leading one, as it was, fell on the slow
/// steps of a short run (the 5 steps a profiler schedule records, one of
/// them slow) and dropped every step up to the slow one, the step a user
/// looks for; the median of all the steps, on the slow ones too.
pub fn warmup_steps(durations: &[Ns]) -> usize {
    match warmup(durations) {
        Warmup::Dropped(n) => n,
        Warmup::NeverSettled => 0,
    }
}

/// What `--skip-warmup` found of a rank's steps (docs/tracestat.md#steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Warmup {
    /// This many leading steps were warm-up (0: the step time settled from
    /// the first step).
    Dropped(usize),
    /// More than half the steps were off the settled time: nothing dropped.
    NeverSettled,
}

/// [`warmup_steps`], saying why none is dropped.
pub fn warmup(durations: &[Ns]) -> Warmup {
    let values: Vec<f64> = durations.iter().map(|&d| d as f64).collect();
    let settled: Vec<Ns> = durations
        .iter()
        .zip(outliers(&values))
        .filter(|&(_, outlier)| !outlier)
        .map(|(&d, _)| d)
        .collect();
    let median = median_ns(if settled.is_empty() {
        durations
    } else {
        &settled
    });
    let mut dropped = 0;
    while dropped + 1 < durations.len() {
        let d = durations[dropped] as f64;
        if (d - median).abs() <= WARMUP_TOLERANCE * median {
            break;
        }
        dropped += 1;
    }
    // More than half the steps "warming up" is a step time that never
    // settled (four problems planted at once in testdata/kineto/recorded/
    // planted: rank 1's steps of 17, 67, 6, 11 and 26 ms): nothing is
    // dropped, rather than all but the last step.
    if dropped > durations.len() / 2 {
        return Warmup::NeverSettled;
    }
    Warmup::Dropped(dropped)
}

/// The median of some durations (the mean of the middle two for an even
/// count).
pub fn median_ns(durations: &[Ns]) -> f64 {
    let mut v = durations.to_vec();
    v.sort_unstable();
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2] as f64,
        _ => (v[n / 2 - 1] as f64 + v[n / 2] as f64) / 2.0,
    }
}

/// The steps a run keeps of those found: `--steps` by id, then
/// `--skip-warmup` on what is left.
pub fn select(found: FoundSteps, options: &StepOptions) -> RankSteps {
    let total = found.steps.len() as u64;
    let mut kept: Vec<StepWindow> = match &options.keep {
        Some(list) => found
            .steps
            .into_iter()
            .filter(|s| list.contains(s.step))
            .collect(),
        None => found.steps,
    };
    let mut dropped = Vec::new();
    let mut settled = None;
    let mut seen = Vec::new();
    if !kept.is_empty() {
        let durations: Vec<Ns> = kept.iter().map(StepWindow::dur_ns).collect();
        let found = warmup(&durations);
        let n = match found {
            Warmup::Dropped(n) => n,
            Warmup::NeverSettled => 0,
        };
        if options.skip_warmup {
            dropped = kept.drain(..n).map(|s| s.step).collect();
            settled = Some(found != Warmup::NeverSettled);
        } else {
            seen = kept[..n].iter().map(|s| s.step).collect();
        }
    }
    RankSteps {
        rule: found.rule,
        source: found.source,
        found: total,
        warmup: dropped,
        warmup_settled: settled,
        warmup_seen: seen,
        // A rank without steps has no warm-up to drop: `--skip-warmup`
        // alone leaves it whole (docs/tracestat.md#steps); `--steps`
        // asks for steps by id, which such a rank does not have.
        selecting: options.keep.is_some() || (options.skip_warmup && total > 0),
        kept,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warmup_stops_at_the_first_settled_step() {
        // 300 and 150 are outliers of the rank, and more than 20% off the
        // median of the other steps (100); 118 is within 20% of it.
        assert_eq!(warmup_steps(&[300, 150, 118, 100, 100, 100]), 2);
        assert_eq!(warmup_steps(&[100, 100, 100]), 0);
        // A short first step is no settled step either.
        assert_eq!(warmup_steps(&[50, 100, 100]), 1);
        // The last step stays.
        assert_eq!(warmup_steps(&[300, 100]), 1);
        assert_eq!(warmup_steps(&[300]), 0);
        // A slow step after the warm-up is no warm-up: rank 0 of the
        // re-run recordings (testdata/kineto/recorded/rerun/slow1), in
        // 10 us: a long first step, then 7.1 and 7.3 ms, the slow 31.9
        // and 9.4 ms. The median of the steps after each leading one,
        // and the median of all (9.4), had every step but the last more
        // than 20% off; without the outlier 31.9 the median is 8.3.
        assert_eq!(warmup_steps(&[1207, 709, 728, 3190, 936]), 1);
        assert_eq!(warmup_steps(&[129, 71, 266, 329, 94]), 0);
        assert_eq!(warmup_steps(&[300, 100, 100, 500, 100, 100]), 1);
        assert_eq!(warmup_steps(&[100, 100, 500, 100]), 0);
        // A step time that never settles: nothing dropped.
        assert_eq!(warmup_steps(&[172, 673, 64, 108, 257]), 0);
        // A long warm-up, the step time falling step by step.
        assert_eq!(
            warmup_steps(&[500, 400, 300, 200, 100, 100, 100, 100, 100, 100]),
            4
        );
    }

    #[test]
    fn periods() {
        let ids = |s: &str| -> Vec<NameId> { s.bytes().map(|b| NameId(b as u32)).collect() };
        assert_eq!(shortest_period(&ids("xabcabcabcabc")), Some(3));
        // A repeated layer `ab` inside the step `ababc` is no period.
        assert_eq!(shortest_period(&ids("ababcababcababcababc")), Some(5));
        assert_eq!(shortest_period(&ids("abcdefg")), None);
    }

    #[test]
    fn a_period_holds_with_an_operation_more_in_one_step() {
        let ids = |s: &str| -> Vec<NameId> { s.bytes().map(|b| NameId(b as u32)).collect() };
        // 10 steps `abcdefgh`, an `x` more at the end of step 4 (a slow
        // step's extra kernel): the positions 8 apart differ in one
        // stretch only, and the steps after it start one later.
        let mut s = String::new();
        for k in 0..10 {
            s.push_str("abcdefgh");
            if k == 4 {
                s.push('x');
            }
        }
        let names = ids(&s);
        assert_eq!(shortest_period(&names), Some(8));
        // Positions 32 to 40 differ; of the two clean stretches of equal
        // length the first, with the period after its last position.
        assert_eq!(clean_stretch(&names, 8), (0, 40));
        let want = vec![0, 8, 16, 24, 32, 41, 49, 57, 65, 73];
        // From an anchor before the extra operation or after it alike.
        assert_eq!(step_starts(&names, 8, 0), want);
        assert_eq!(step_starts(&names, 8, 49), want);
        // One operation fewer: the steps after it start one earlier.
        let mut s = "abcdefgh".repeat(10);
        s.remove(45);
        let names = ids(&s);
        assert_eq!(shortest_period(&names), Some(8));
        assert_eq!(
            step_starts(&names, 8, 0),
            vec![0, 8, 16, 24, 32, 40, 47, 55, 63, 71]
        );
        // A layer repeated inside every step differs once per step: no
        // period of 2, the step's 9 is found; over 3 steps too, where the
        // layer's differences are as few as an anomaly's (a period that
        // fits without any is taken first).
        assert_eq!(shortest_period(&ids(&"ababababc".repeat(10))), Some(9));
        assert_eq!(shortest_period(&ids(&"ababababc".repeat(3))), Some(9));
        assert_eq!(
            shortest_period(&ids(&"abababababababababababc".repeat(4))),
            Some(23)
        );
        // 3 steps of 24 layers of 8 operations between 3 of their own: the
        // operations near the middle are all the layers', so the layer's 8
        // is a candidate, and its differences at the 2 step boundaries
        // compared are as few as anomalies'; the step's 198 fits without
        // any and is taken.
        let step = format!("xyz{}uvw", "abcdefgh".repeat(24));
        assert_eq!(shortest_period(&ids(&step.repeat(3))), Some(198));
        // Differences all through (Thue-Morse): no period at all.
        let thue: String = (0..600_u32)
            .map(|i| if i.count_ones() % 2 == 0 { 'a' } else { 'b' })
            .collect();
        assert_eq!(shortest_period(&ids(&thue)), None);
        // Three stretches of differences are more than a few anomalies.
        let mut s = String::new();
        for k in 0..12 {
            s.push_str("abcdefgh");
            if k % 4 == 1 {
                s.push('x');
            }
        }
        assert!(!fits(&ids(&s)[..], 8, true));
        // Two steps of 24 layers, 6 operations of the step's own between
        // them: no step's period is a candidate (it needs 3 steps), and the
        // layer's 8 differs in 2 stretches of 14 (8 + 6), more than an
        // anomaly's 8 + 3: no period, as before anomalies were allowed.
        assert_eq!(shortest_period(&ids(&step.repeat(2))), None);
    }

    #[test]
    fn step_lists() {
        let l = StepList::parse(&["3-5,9"]).unwrap();
        assert!(l.contains(3) && l.contains(5) && l.contains(9));
        assert!(!l.contains(6));
        assert!(StepList::parse(&["5-3"]).is_err());
        assert!(StepList::parse(&["x"]).is_err());
    }
}
