//! The merge itself: one scanning thread validates the inputs one after the
//! other and hands batches of raw events to the writing thread, which
//! filters, rewrites (only the fields an option changes), hands the events
//! it keeps to the statistics (`--stats`, [`crate::stats`]) and writes.
//! Memory: a few 1 MiB batches in flight, plus the scanner's buffer (one
//! event); with `--stats`, the intervals of the input being read.
//!
//! Inputs are streamed, never mapped, and watched while they are read: one
//! that changes under the merge is an error naming it
//! (docs/robustness.md#changed-inputs).

use std::io::{Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use anyhow::Result;
use regex::Regex;
use tracestat::analyzers::RankSummary;
use unitrace_core::cli::warn;
use unitrace_core::trace::decimal::Decimal;
use unitrace_core::trace::merged_input::{
    tagged_link, EventEdits, InputIds, MergedIds, METRIC_LINK_MARK,
};
use unitrace_core::trace::{
    object_members, Event, EventFields, Field, TraceError, TraceReader, TraceSummary,
};

use crate::select::Window;
use crate::stats::{json_dialect, InputStats, StatsPlan, Summarizer, TopLevelMember};
use unitrace_core::timeline::detect::JsonDialect;
use unitrace_core::timeline::gzip::{GzipDamage, GzipWatch};
use unitrace_core::timeline::{Cut, TimelineFormat};

const TOOL: &str = "mergetrace";
/// Raw event bytes per batch handed from the scanner to the writer.
const BATCH_BYTES: usize = 1 << 20;
/// Batches in flight (bounds the memory of the pipeline).
const BATCHES_IN_FLIGHT: usize = 4;

/// One input as the merge sees it.
#[derive(Debug, Clone)]
pub struct InputPlan {
    pub path: PathBuf,
    /// Rank from the file name (for `rank N` labels) or the head's label.
    pub rank: Option<u32>,
    pub rank_from_name: bool,
    /// Subtracted from every `ts` (`--align start`; a Kineto input's clock
    /// base against the earliest input's, docs/mergetrace.md#kineto).
    pub shift: Option<Decimal>,
    /// A PyTorch profiler (Kineto) trace (docs/mergetrace.md#kineto): its
    /// own pid namespace and flow ids, its processes labelled with its rank,
    /// `--stats` read through Kineto's vocabulary.
    pub kineto: bool,
    /// Kineto: `baseTimeNanoseconds`, for `--stats`.
    pub clock_base: Option<i64>,
    /// `key=value` appended as a query to every metric link
    /// (`http(s)://localhost:8000/<kernel>/<id>`) of this input: `rank=R`,
    /// or `process=<app>.<pid>` outside `rank_<r>.` folders, so one chart
    /// server can tell whose link it is (uniview's in-memory merge,
    /// docs/uniview.md#result-dir). Never set by mergetrace's command line.
    pub link_tag: Option<String>,
}

impl InputPlan {
    /// The clock base a Kineto input's times count from (none for other
    /// inputs, docs/formats.md#kineto-json-time).
    pub fn kineto_clock_base(&self) -> Option<i64> {
        self.clock_base.filter(|_| self.kineto)
    }
}

/// What is done to the events.
pub struct MergeOptions {
    pub remap_pids: bool,
    pub filter: Option<Regex>,
    /// Absolute window (already offset by the trace origin).
    pub window: Option<Window>,
    /// `--stats`.
    pub stats: Option<StatsPlan>,
    pub skip_invalid: bool,
    pub max_event_bytes: usize,
}

#[derive(Debug, Default)]
pub struct MergeOutcome {
    pub events_written: u64,
    /// `--stats`: every rank's summary, in input order.
    pub ranks: Vec<RankSummary>,
}

struct EventRec {
    /// In `Batch::data`.
    range: Range<usize>,
    fields: EventFields,
    index: u64,
    offset: u64,
}

/// Events of one input, copied from the scanner's buffer. `data` holds
/// them joined by `,\n`, the separator of the output
/// ([`EnvelopeWriter`]), so that a batch the writer passes through
/// unchanged is written with one call ([`Merger::passes_through`]).
#[derive(Default)]
struct Batch {
    data: Vec<u8>,
    events: Vec<EventRec>,
    /// Input bytes the batch covers (for the progress bar).
    input_bytes: u64,
}

impl Batch {
    fn raw(&self, rec: &EventRec) -> &[u8] {
        &self.data[rec.range.clone()]
    }

    fn clear(&mut self) {
        self.data.clear();
        self.events.clear();
        self.input_bytes = 0;
    }
}

enum Msg {
    Start(usize),
    Batch(Batch),
    /// The input's end: what its scan found, and its top-level members
    /// besides `traceEvents` ([`TraceReader::top_level_members`]).
    End(usize, Result<Scanned, TraceError>, Vec<TopLevelMember>),
}

/// What the scan of a whole input found.
#[derive(Clone)]
struct Scanned {
    summary: TraceSummary,
    /// A gzipped input: what ended its gzip stream, if not a member's end.
    gzip: Option<GzipDamage>,
}

/// Scanner thread: validates every input in order and sends its events.
fn scan_inputs(plans: &[InputPlan], max_event: usize, tx: SyncSender<Msg>, free: Receiver<Batch>) {
    let mut batch = Batch::default();
    for (i, plan) in plans.iter().enumerate() {
        if tx.send(Msg::Start(i)).is_err() {
            return;
        }
        let (mut reader, gzip) = match open_json(&plan.path, max_event) {
            Ok(r) => r,
            Err(e) => {
                let err = TraceError {
                    kind: unitrace_core::trace::TraceErrorKind::Io(e),
                    line: None,
                    offset: 0,
                };
                if tx.send(Msg::End(i, Err(err), Vec::new())).is_err() {
                    return;
                }
                continue;
            }
        };
        let result = loop {
            match reader.next_event() {
                Ok(Some(ev)) => {
                    if !batch.events.is_empty() {
                        batch.data.extend_from_slice(EVENT_SEPARATOR);
                    }
                    let start = batch.data.len();
                    batch.data.extend_from_slice(ev.raw());
                    batch.input_bytes += ev.raw().len() as u64;
                    batch.events.push(EventRec {
                        range: start..batch.data.len(),
                        fields: *ev.fields(),
                        index: ev.index(),
                        offset: ev.offset(),
                    });
                    if batch.data.len() >= BATCH_BYTES {
                        let next = free.try_recv().unwrap_or_default();
                        if tx
                            .send(Msg::Batch(std::mem::replace(&mut batch, next)))
                            .is_err()
                        {
                            return;
                        }
                    }
                }
                Ok(None) => {
                    break Ok(Scanned {
                        summary: reader.summary().clone(),
                        gzip: gzip.as_ref().and_then(GzipWatch::damage),
                    })
                }
                Err(e) => break Err(e),
            }
        };
        if !batch.events.is_empty() {
            let next = free.try_recv().unwrap_or_default();
            if tx
                .send(Msg::Batch(std::mem::replace(&mut batch, next)))
                .is_err()
            {
                return;
            }
        }
        let members = reader.top_level_members().to_vec();
        if tx.send(Msg::End(i, result, members)).is_err() {
            return;
        }
    }
}

/// A JSON input's reader: a plain file is streamed and watched
/// (docs/robustness.md#changed-inputs); a gzipped one is inflated on the
/// fly (docs/mergetrace.md#usage).
fn open_json(path: &Path, max_event: usize) -> std::io::Result<(JsonInput, Option<GzipWatch>)> {
    let input = crate::input::open_input(path)?;
    let reader = TraceReader::with_max_event_bytes(input.stream, max_event);
    if !input.plain {
        return Ok((reader, input.gzip));
    }
    // Read again for a line number rather than every byte counted for one.
    let path = path.to_path_buf();
    let reader =
        reader.with_line_lookup(move |offset| unitrace_core::trace::line_of_offset(&path, offset));
    Ok((reader, None))
}

type JsonInput = TraceReader<Box<dyn Read + Send>>;

/// The clock base the output states: the earliest of its inputs' when
/// they are all PyTorch profiler traces with one (docs/mergetrace.md#kineto),
/// so that tracestat reads the same times from the merge as from the
/// ranks' files.
fn merged_clock_base(plans: &[InputPlan]) -> Option<i64> {
    let bases: Vec<Option<i64>> = plans.iter().map(InputPlan::kineto_clock_base).collect();
    unitrace_core::trace::merged_input::merged_clock_base(&bases)
}

/// Whether a scan failed because its input changed while it was read.
fn changed_while_read(e: &TraceError) -> bool {
    matches!(&e.kind, unitrace_core::trace::TraceErrorKind::Io(io)
        if unitrace_core::watched_file::ChangedWhileRead::of(io).is_some())
}

/// What the output puts between two events.
const EVENT_SEPARATOR: &[u8] = b",\n";

/// Writes `{\n"traceEvents": [\n`, the events joined by `,\n`, and
/// `\n]\n}\n` (docs/compatibility.md#mergetrace-merge; with no event the array is `[\n]`,
/// which is valid JSON, unlike the original's output, docs/compatibility.md#mergetrace-2).
/// A merge of PyTorch profiler traces only states their common clock base
/// first (`"baseTimeNanoseconds": B,`, docs/mergetrace.md#kineto).
pub struct EnvelopeWriter<W: Write> {
    out: W,
    events: u64,
}

impl<W: Write> EnvelopeWriter<W> {
    pub fn new(mut out: W, clock_base: Option<i64>) -> std::io::Result<Self> {
        out.write_all(b"{\n")?;
        if let Some(base) = clock_base {
            writeln!(out, "\"baseTimeNanoseconds\": {base},")?;
        }
        out.write_all(b"\"traceEvents\": [\n")?;
        Ok(EnvelopeWriter { out, events: 0 })
    }

    pub fn event(&mut self, raw: &[u8]) -> std::io::Result<()> {
        if self.events > 0 {
            self.out.write_all(EVENT_SEPARATOR)?;
        }
        self.events += 1;
        self.out.write_all(raw)
    }

    /// Writes `count` events at once: `joined` is their text joined by
    /// [`EVENT_SEPARATOR`].
    fn events_joined(&mut self, joined: &[u8], count: u64) -> std::io::Result<()> {
        if count == 0 {
            return Ok(());
        }
        if self.events > 0 {
            self.out.write_all(EVENT_SEPARATOR)?;
        }
        self.events += count;
        self.out.write_all(joined)
    }

    pub fn finish(mut self) -> std::io::Result<(W, u64)> {
        if self.events > 0 {
            self.out.write_all(b"\n")?;
        }
        self.out.write_all(b"]\n}\n")?;
        Ok((self.out, self.events))
    }
}

/// Per-input state of the writer.
struct FileState {
    index: usize,
    /// Its ids and labels in the merged trace (`--remap-pids`, Kineto
    /// inputs: docs/mergetrace.md#kineto).
    ids: InputIds,
    stats: Option<InputStats>,
}

pub struct Merger<'a, W: Write> {
    plans: &'a [InputPlan],
    opts: &'a MergeOptions,
    out: EnvelopeWriter<W>,
    merged_ids: MergedIds,
    rewrites: EventEdits,
    progress: Option<indicatif::ProgressBar>,
}

impl<'a, W: Write + Send> Merger<'a, W> {
    pub fn new(
        plans: &'a [InputPlan],
        opts: &'a MergeOptions,
        out: W,
        progress: Option<indicatif::ProgressBar>,
    ) -> Result<Self> {
        Ok(Merger {
            plans,
            opts,
            out: EnvelopeWriter::new(out, merged_clock_base(plans))?,
            merged_ids: MergedIds::default(),
            rewrites: EventEdits::default(),
            progress,
        })
    }

    /// Runs the pipeline; returns the writer (to commit) and the outcome.
    pub fn run(mut self) -> Result<(W, MergeOutcome)> {
        let (tx, rx) = sync_channel::<Msg>(BATCHES_IN_FLIGHT);
        let (free_tx, free_rx) = sync_channel::<Batch>(BATCHES_IN_FLIGHT + 2);
        let plans = self.plans;
        let max_event = self.opts.max_event_bytes;
        let mut summarizer = self.opts.stats.as_ref().map(Summarizer::new);
        let mut outcome = MergeOutcome::default();
        let mut done_bytes = 0u64;
        let result: Result<()> = std::thread::scope(|scope| {
            scope.spawn(move || scan_inputs(plans, max_event, tx, free_rx));
            let mut state: Option<FileState> = None;
            for msg in rx {
                match msg {
                    Msg::Start(i) => {
                        let plan = &plans[i];
                        // A Kineto input is told by content (gzip too) and
                        // counts from its clock base (docs/mergetrace.md#kineto).
                        let dialect = if plan.kineto {
                            JsonDialect::Kineto
                        } else {
                            json_dialect(&plan.path)
                        };
                        let stats = self
                            .opts
                            .stats
                            .as_ref()
                            .map(|_| InputStats::json(&plan.path, i, dialect, plan.clock_base));
                        // Process names get the rank when the file name
                        // gave it (`--remap-pids`) or it is a Kineto input.
                        let label = plan.rank.filter(|_| plan.rank_from_name || plan.kineto);
                        state = Some(FileState {
                            index: i,
                            ids: InputIds::new(i, label),
                            stats,
                        });
                    }
                    Msg::Batch(mut batch) => {
                        let st = state.as_mut().expect("Start precedes batches");
                        let whole = self.passes_through(st.index);
                        for rec in &batch.events {
                            let raw = batch.raw(rec);
                            let ev = Event::from_parts(raw, rec.fields, rec.index, rec.offset);
                            if !whole {
                                self.event(st, &ev)?;
                            } else if let Some(stats) = st.stats.as_mut() {
                                stats.event(&ev)?;
                            }
                        }
                        if whole {
                            self.out
                                .events_joined(&batch.data, batch.events.len() as u64)?;
                        }
                        if let Some(pb) = &self.progress {
                            pb.inc(batch.input_bytes);
                        }
                        batch.clear();
                        let _ = free_tx.try_send(batch);
                    }
                    Msg::End(i, result, members) => {
                        let plan = &plans[i];
                        let st = state.take().expect("Start precedes End");
                        let summary = result.as_ref().ok().map(|s| s.summary.clone());
                        match result {
                            Ok(s) => report_summary(&plan.path, &s.summary, s.gzip.as_ref()),
                            Err(e) => {
                                let changed = changed_while_read(&e);
                                let e = e.into_input_error(&plan.path);
                                if changed {
                                    // Never merged in part, whatever
                                    // the options (docs/robustness.md#changed-inputs).
                                    return Err(e.into());
                                }
                                if self.opts.skip_invalid {
                                    warn(TOOL, format!("{e}; skipping the rest of this file"));
                                } else if i + 1 < plans.len() {
                                    // The original skips such a file and goes on
                                    // (docs/compatibility.md#mergetrace-invalid); say how to get that.
                                    return Err(anyhow::anyhow!(
                                        "{e} (--skip-invalid merges the other files)"
                                    ));
                                } else {
                                    return Err(e.into());
                                }
                            }
                        }
                        if let (Some(stats), Some(summarizer)) = (st.stats, summarizer.as_mut()) {
                            // Summarised now: the intervals of one input
                            // at a time (docs/mergetrace.md#statistics).
                            let traces = stats.finish_json(&members, summary.as_ref())?;
                            outcome
                                .ranks
                                .extend(summarizer.summarize(traces, &plan.path));
                        }
                        done_bytes += std::fs::metadata(&plan.path).map_or(0, |m| m.len());
                        if let Some(pb) = &self.progress {
                            pb.set_position(done_bytes);
                        }
                    }
                }
            }
            Ok(())
        });
        result?;
        let (w, n) = self.out.finish()?;
        outcome.events_written = n;
        Ok((w, outcome))
    }

    /// Whether every event of this input is written as it was read: no
    /// option drops or edits one (what [`Merger::event`] would do then is
    /// feed the statistics and write the raw text). Such batches are
    /// written whole, not event by event
    /// (docs/benchmarks.md#the-json-trace-scanner).
    fn passes_through(&self, input: usize) -> bool {
        let plan = &self.plans[input];
        self.opts.filter.is_none()
            && self.opts.window.is_none()
            && !self.remaps(plan)
            && plan.shift.filter(|s| !s.is_zero()).is_none()
            && plan.link_tag.is_none()
    }

    /// Whether an input's pids, tids and flow ids are renumbered:
    /// `--remap-pids`, and always for Kineto traces, whose device pids are
    /// the device indices 0..N in every file (docs/mergetrace.md#kineto).
    fn remaps(&self, plan: &InputPlan) -> bool {
        self.opts.remap_pids || plan.kineto
    }

    fn event(&mut self, st: &mut FileState, ev: &Event<'_>) -> Result<()> {
        let plan = &self.plans[st.index];
        let is_meta = ev.str_raw(Field::Ph) == Some(b"M");
        let shift = plan.shift.filter(|s| !s.is_zero());
        if !is_meta {
            if let Some(re) = &self.opts.filter {
                match ev.str(Field::Name) {
                    Some(name) if re.is_match(&name) => {}
                    _ => return Ok(()),
                }
            }
            if let Some(w) = &self.opts.window {
                if let Some(ts) = ev.decimal(Field::Ts) {
                    let ts = match shift {
                        Some(s) => ts.checked_sub(s).unwrap_or(ts),
                        None => ts,
                    };
                    if !w.overlaps(ts, ev.decimal(Field::Dur)) {
                        return Ok(());
                    }
                }
            }
        }
        if let Some(stats) = st.stats.as_mut() {
            stats.event(ev)?;
        }
        self.rewrites.clear();
        if let Some(shift) = shift {
            self.rewrites.shift_ts(ev, shift);
        }
        if self.remaps(plan) {
            let found = st
                .ids
                .renumber(&mut self.merged_ids, ev, &mut self.rewrites);
            if let Some(label) = found.label_before {
                self.out.event(label.as_bytes())?;
            }
            if let Some(id) = found.large_flow_id {
                warn(
                    TOOL,
                    format!(
                        "{}: flow id {id} is not below 2^32; left as is",
                        plan.path.display()
                    ),
                );
            }
        }
        if let Some(tag) = &plan.link_tag {
            self.tag_link(ev, tag);
        }
        let raw = self.rewrites.apply(ev.raw());
        self.out.event(raw)?;
        Ok(())
    }

    /// `args.metrics` gets `?rank=R` before its closing quote
    /// ([`InputPlan::link_tag`]).
    fn tag_link(&mut self, ev: &Event<'_>, tag: &str) {
        let Some(args_span) = ev.fields().span(Field::Args) else {
            return;
        };
        let args = &ev.raw()[args_span.range()];
        if args.first() != Some(&b'{') || memchr::memmem::find(args, METRIC_LINK_MARK).is_none() {
            return;
        }
        let Some((_, span)) = object_members(args).find(|(k, _)| *k == b"metrics") else {
            return;
        };
        let v = &args[span.range()];
        if v.len() < 2 || v[0] != b'"' || v[v.len() - 1] != b'"' {
            return;
        }
        let Some(tagged) = tagged_link(&v[1..v.len() - 1], tag) else {
            return;
        };
        let added = &tagged[v.len() - 2..];
        let at = args_span.start as usize + span.end as usize - 1;
        self.rewrites
            .replace(at..at, String::from_utf8_lossy(added).into_owned());
    }
}

/// `:LINE` when the line is known (the file read again to find it may be
/// gone).
fn at_line(line: Option<u64>) -> String {
    line.map(|l| format!(":{l}")).unwrap_or_default()
}

/// One-line warnings for what a finished scan found (`gzip`: what ended a
/// gzipped input's stream, docs/robustness.md#gzip); once per input.
pub fn report_summary(path: &Path, s: &TraceSummary, gzip: Option<&GzipDamage>) {
    let p = path.display();
    let gzip_cut = match gzip {
        Some(GzipDamage::Cut(at)) => Some(*at),
        _ => None,
    };
    if s.events == 0 && (s.truncation.is_some() || gzip_cut.is_some()) {
        // Cut before its first event: nothing to merge, and said so in
        // the words of tracestat's error (docs/errors.md).
        let cut = Cut {
            dropped_bytes: 0,
            line: None,
            partial_event: false,
            gzip: gzip_cut,
        };
        warn(TOOL, format!("{p}: {}; skipped", cut.describe_empty()));
        return;
    }
    if s.empty {
        warn(TOOL, format!("{p}: empty file, skipped"));
        return;
    }
    if !s.has_trace_events {
        warn(TOOL, format!("{p}: no traceEvents array, skipped"));
        return;
    }
    report_damage(path, s, gzip);
}

/// The warnings of an input whose events were merged: a cut (of the trace
/// or of its gzip stream), data after its end.
fn report_damage(path: &Path, s: &TraceSummary, gzip: Option<&GzipDamage>) {
    let p = path.display();
    let gzip_cut = match gzip {
        Some(GzipDamage::Cut(at)) => Some(*at),
        _ => None,
    };
    let mut cut_said = false;
    if let Some(t) = &s.truncation {
        let what = match (gzip_cut, t.partial_event) {
            (Some(_), _) => Some("gzip stream cut short"),
            (None, true) => Some("trace cut short"),
            (None, false) if s.form == Some(unitrace_core::trace::TraceForm::Object) => {
                Some("trace not closed")
            }
            // A bare array without its closing ']' is legal in Chrome's format.
            (None, false) => None,
        };
        if let Some(what) = what {
            let (line, kept) = if t.partial_event {
                (at_line(t.line), format!("{} complete events", s.events))
            } else {
                (String::new(), format!("all {} events", s.events))
            };
            warn(
                TOOL,
                format!(
                    "{p}{line}: {what} (writer killed?): kept {kept}, dropped {} bytes",
                    t.dropped_bytes
                ),
            );
            cut_said = true;
        }
    }
    if let (Some(at), false) = (gzip_cut, cut_said) {
        // The trace inside ended whole; its gzip stream did not.
        let cut = Cut {
            dropped_bytes: 0,
            line: None,
            partial_event: false,
            gzip: Some(at),
        };
        warn(
            TOOL,
            format!("{p}: {}", cut.describe(TimelineFormat::ChromeJson)),
        );
    }
    if let Some(trailing @ GzipDamage::Trailing { .. }) = gzip {
        warn(TOOL, format!("{p}: {}", trailing.describe()));
    }
    if let Some((line, _)) = s.trailing_data {
        warn(
            TOOL,
            format!(
                "{p}{}: ignoring data after the end of the trace",
                at_line(line)
            ),
        );
    }
}
