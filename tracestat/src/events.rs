//! `--events DIR`: the trace as a queryable dataset, one Parquet row per
//! trace event, partitioned Hive-style by rank (`DIR/rank=N/part-*.parquet`)
//! so that DuckDB, pandas, polars, Spark, Dask or Trino read it as is
//! (docs/tracestat.md#events, queries in docs/sql.md).
//!
//! Each input file is one rayon task and is read once through the trace
//! source (`unitrace_core::timeline`: any timeline format, gzipped or not,
//! docs/formats.md#timeline-model), whose events feed
//! [`crate::event_index`] (host ranges, flows, names) and are recorded as
//! rows ([`crate::event_spool`]); ranks are the source's rank slots
//! (docs/formats.md#timeline-ranks). Once the index is complete the rows
//! are replayed, streamed into row groups of `unitrace_render::parquet`
//! and cut into parts of [`PART_ROWS`] rows. [`Passes::Two`] reads the file
//! a second time instead of replaying: the reference the single pass is
//! tested against.
//! A rank's parts and its `_SUCCESS` marker are written into a folder of
//! the run's hidden staging folder beside `DIR` ([`Staging`]), renamed to
//! `DIR/rank=N` once complete, so a reader of `DIR` sees a rank whole or
//! not at all (docs/robustness.md#datasets). A re-run skips
//! complete ranks (the marker names the input's size and modification
//! time and the options) and redoes the others from scratch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{anyhow, bail, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use unitrace_core::atomic::{
    publish_dir, remove_stale_temp_files, write_atomic, AtomicFile, CreatedDir, TempDir,
};
use unitrace_core::category_schema::CategorySchema;
use unitrace_core::summary_text::normalize_kernel_name;
use unitrace_core::InputError;
use unitrace_render::parquet::{Column, ParquetWriter, Schema};

use crate::classify::{builtin_class, is_memory_command, Class, Classifier};
use crate::event_index::{FileIndex, NO_RANGES};
use crate::event_spool::{Recorder, RowKeys, Side, Slice, Spool};
use crate::time::Ns;
use crate::RankSet;
use unitrace_core::timeline::rank::rank_from_path;
use unitrace_core::timeline::{
    self, CatId, DeviceOp, Dropped, HostSpan, NameId, Names, OtherSpan, RankSlot, SourceError,
    TimelineRead, TraceSink,
};

/// Rows per part file: parts stay a size engines split work by.
pub const PART_ROWS: u64 = 1 << 20;

/// The marker of a complete rank partition, written after its parts.
pub const MARKER: &str = "_SUCCESS";
const MARKER_FORMAT: &str = "tracestat-events";
/// Bumped when the columns or the marker change: older partitions are then
/// redone (version 2: the marker keys on the input's modification time too).
const MARKER_VERSION: u32 = 2;

/// The columns of a row, in file order (docs/tracestat.md#events-columns).
/// `rank` is not among them: it is the partition (`rank=N`), as Hive
/// layouts do, and readers add it from the path. Only the integer columns
/// keep min/max statistics: a row group holds names of every kind in any
/// order, so string bounds would prune nothing and cost a comparison per
/// value (docs/benchmarks.md#tracestat---events).
pub fn schema() -> Schema {
    Schema::new(vec![
        Column::int64("pid"),
        Column::int64("tid"),
        Column::utf8("process").nullable().without_statistics(),
        Column::utf8("thread").nullable().without_statistics(),
        Column::utf8("cat").without_statistics(),
        Column::utf8("kind").without_statistics(),
        Column::utf8("name").without_statistics(),
        Column::utf8("short_name").without_statistics(),
        Column::utf8("category").nullable().without_statistics(),
        Column::int64("start_ns"),
        Column::int64("duration_ns"),
        Column::int64("instance_id").nullable(),
        Column::utf8("host_range").nullable().without_statistics(),
        Column::utf8("launch_call").nullable().without_statistics(),
        Column::int64("launch_latency_ns").nullable(),
        Column::int64("bytes").nullable(),
        Column::utf8("comm").nullable().without_statistics(),
    ])
}

mod col {
    pub const PID: usize = 0;
    pub const TID: usize = 1;
    pub const PROCESS: usize = 2;
    pub const THREAD: usize = 3;
    pub const CAT: usize = 4;
    pub const KIND: usize = 5;
    pub const NAME: usize = 6;
    pub const SHORT_NAME: usize = 7;
    pub const CATEGORY: usize = 8;
    pub const START: usize = 9;
    pub const DURATION: usize = 10;
    pub const INSTANCE: usize = 11;
    pub const HOST_RANGE: usize = 12;
    pub const LAUNCH_CALL: usize = 13;
    pub const LAUNCH_LATENCY: usize = 14;
    pub const BYTES: usize = 15;
    pub const COMM: usize = 16;
}

/// The `kind` of a row: the classification the report uses
/// (docs/tracestat.md#classification).
pub mod kind {
    pub const KERNEL: &str = "kernel";
    pub const MEMORY: &str = "memory";
    pub const API_CALL: &str = "api_call";
    pub const HOST_RANGE: &str = "host_range";
    pub const COLLECTIVE: &str = "collective";
    pub const OTHER: &str = "other";
}

/// The [`kind`] of a row, numbered for [`ParquetWriter::push_key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowKind {
    Kernel,
    Memory,
    ApiCall,
    HostRange,
    Collective,
    Other,
}

impl RowKind {
    fn name(self) -> &'static str {
        match self {
            RowKind::Kernel => kind::KERNEL,
            RowKind::Memory => kind::MEMORY,
            RowKind::ApiCall => kind::API_CALL,
            RowKind::HostRange => kind::HOST_RANGE,
            RowKind::Collective => kind::COLLECTIVE,
            RowKind::Other => kind::OTHER,
        }
    }
}

/// How an export reads each file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Passes {
    /// One walk: the index and the recorded rows, replayed once the index
    /// is complete (docs/tracestat.md#events).
    #[default]
    One,
    /// Two walks, an index pass and a row pass: the first design, kept as
    /// the reference the single pass is tested against (same rows, same
    /// bytes).
    Two,
}

/// What an export is asked to do.
pub struct EventsPlan<'a> {
    pub out: &'a Path,
    pub inputs: &'a [PathBuf],
    pub schema: Option<&'a CategorySchema>,
    /// File name of the schema, recorded in the markers.
    pub schema_name: Option<String>,
    pub ranks: Option<&'a RankSet>,
    pub passes: Passes,
    /// Bytes of recorded rows a file keeps in memory before they spill to
    /// a temporary file ([`crate::event_spool::SPOOL_CHUNK`]).
    pub spool_chunk: usize,
    /// Whether a file cut short is warned about here: not when the run
    /// reads the files again for its report, which warns (one warning per
    /// file, docs/robustness.md).
    pub warn_cuts: bool,
}

/// What an export did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ExportStats {
    pub ranks_written: u64,
    /// Ranks complete from an earlier run, left as they were.
    pub ranks_skipped: u64,
    pub rows: u64,
    pub parts: u64,
    /// Events left out as implausible.
    pub dropped: u64,
    /// Inputs that yielded no event, and why: left out, or the run's
    /// error when every input is one (docs/tracestat.md#inputs).
    pub empty: Vec<(PathBuf, String)>,
}

/// The `_SUCCESS` marker of a rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    pub format: String,
    pub version: u32,
    pub source: String,
    /// Size of the input when it was exported: a changed input is redone.
    pub source_bytes: u64,
    /// Modification time of the input when it was exported, nanoseconds
    /// since the Unix epoch: a rewritten input of the same size is redone.
    #[serde(default)]
    pub source_modified_ns: Option<i128>,
    pub schema: Option<String>,
    pub rows: u64,
    pub parts: u64,
}

pub fn rank_dir(out: &Path, rank: u32) -> PathBuf {
    out.join(format!("rank={rank}"))
}

fn part_name(n: u64) -> String {
    format!("part-{n:05}.parquet")
}

/// What a partition's marker keys on: the input's size and modification
/// time when it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SourceStamp {
    bytes: u64,
    modified_ns: Option<i128>,
}

impl SourceStamp {
    fn of(path: &Path) -> Result<SourceStamp> {
        let meta = std::fs::metadata(path).map_err(|e| InputError::io(path, &e))?;
        let modified_ns =
            meta.modified()
                .ok()
                .map(|t| match t.duration_since(std::time::UNIX_EPOCH) {
                    Ok(d) => d.as_nanos() as i128,
                    Err(e) => -(e.duration().as_nanos() as i128),
                });
        Ok(SourceStamp {
            bytes: meta.len(),
            modified_ns,
        })
    }
}

/// Whether `rank`'s partition is complete for this input and options.
fn complete(out: &Path, rank: u32, source: SourceStamp, schema: &Option<String>) -> bool {
    let Ok(text) = std::fs::read(rank_dir(out, rank).join(MARKER)) else {
        return false;
    };
    match serde_json::from_slice::<Marker>(&text) {
        Ok(m) => {
            m.format == MARKER_FORMAT
                && m.version == MARKER_VERSION
                && m.source_bytes == source.bytes
                && m.source_modified_ns.is_some()
                && m.source_modified_ns == source.modified_ns
                && &m.schema == schema
        }
        Err(_) => false,
    }
}

/// Exports every input (in parallel, in the current rayon pool). A run
/// that fails leaves the ranks it completed, no part of the others, and
/// no `DIR` when it created `DIR` and completed nothing
/// (docs/robustness.md#datasets).
pub fn export(plan: &EventsPlan<'_>) -> Result<ExportStats> {
    let created = CreatedDir::create_all(plan.out).map_err(|e| InputError::io(plan.out, &e))?;
    let staging = Staging::new(plan.out);
    let claims: Mutex<HashMap<u32, String>> = Mutex::new(HashMap::new());
    let several = plan.inputs.len() > 1;
    let results: Vec<Result<ExportStats>> = plan
        .inputs
        .par_iter()
        .enumerate()
        .map(|(i, path)| export_file(plan, &staging, path, i, several, &claims))
        .collect();
    drop(staging);
    let mut total = ExportStats::default();
    for r in results {
        let s = r?;
        total.ranks_written += s.ranks_written;
        total.ranks_skipped += s.ranks_skipped;
        total.rows += s.rows;
        total.parts += s.parts;
        total.dropped += s.dropped;
        total.empty.extend(s.empty);
    }
    // Before `keep`: a run that fails this way leaves no DIR it created.
    crate::check_empty_inputs(crate::TOOL, &total.empty, plan.inputs.len())?;
    created.keep();
    Ok(total)
}

/// Where a run writes its ranks before each is published: a hidden
/// temporary folder `.DIR.unitrace-tmp.HOST.PID.RANDOM` beside `DIR`, so
/// that no glob under `DIR` (`DIR/*/*.parquet`, `DIR/**`) ever reaches a
/// part of an unfinished rank, whatever the reader does with hidden names
/// (DuckDB's and polars' globs match them). When `DIR`'s parent cannot
/// take it (not writable, another file system: the rename must stay on
/// one), it is `DIR/.staging.unitrace-tmp...` instead, whose parts only a
/// recursive glob of a reader that reads hidden folders could reach
/// (docs/robustness.md#datasets). Removed with what it holds when the run
/// ends, fails or is interrupted; the next run removes the one of a
/// killed run.
struct Staging {
    out: PathBuf,
    /// Created with the first rank to write: a run that finds every rank
    /// complete writes nothing, not even a folder.
    root: Mutex<Option<TempDir>>,
}

impl Staging {
    fn new(out: &Path) -> Staging {
        // What killed runs left: staging folders beside and inside `DIR`.
        let _ = remove_stale_temp_files(&parent_of(out));
        let _ = remove_stale_temp_files(out);
        Staging {
            out: out.to_path_buf(),
            root: Mutex::new(None),
        }
    }

    fn create_root(out: &Path) -> Result<TempDir> {
        if let Ok(root) = TempDir::create(out) {
            if same_file_system(root.path(), out) {
                return Ok(root);
            }
        }
        let inside = out.join("staging");
        Ok(TempDir::create(&inside).map_err(|e| InputError::io(out, &e))?)
    }

    /// A new folder for `rank`'s parts.
    fn rank_dir(&self, rank: u32) -> Result<PathBuf> {
        let mut root = self.root.lock().unwrap_or_else(|e| e.into_inner());
        if root.is_none() {
            *root = Some(Staging::create_root(&self.out)?);
        }
        let dir = rank_dir(root.as_ref().expect("created above").path(), rank);
        std::fs::create_dir(&dir).map_err(|e| InputError::io(&dir, &e))?;
        Ok(dir)
    }
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn same_file_system(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        true
    }
}

fn export_file(
    plan: &EventsPlan<'_>,
    staging: &Staging,
    path: &Path,
    input_index: usize,
    several: bool,
    claims: &Mutex<HashMap<u32, String>>,
) -> Result<ExportStats> {
    let source = SourceStamp::of(path)?;
    let path_rank = rank_from_path(path).map(|r| r.0);
    let mut stats = ExportStats::default();
    if let Some(r) = path_rank {
        if plan.ranks.is_some_and(|set| !set.contains(r)) {
            return Ok(stats);
        }
        // The common case, one rank per file: known complete without
        // reading it.
        if complete(plan.out, r, source, &plan.schema_name) {
            stats.ranks_skipped += 1;
            return Ok(stats);
        }
    }
    let mut index = FileIndex::default();
    let (read, spool) = match plan.passes {
        Passes::One => {
            let mut recorder = Recorder {
                index: &mut index,
                spool: Spool::new(plan.out, plan.spool_chunk),
                failed: None,
            };
            let read = timeline::read_file(path, &mut recorder);
            let read = source_result(read, recorder.failed.take())?;
            (read, Some(recorder.spool))
        }
        Passes::Two => {
            let read = timeline::read_file(path, &mut index);
            (source_result(read, None)?, None)
        }
    };
    index.finish(&read.router);
    let router = &read.router;
    if !(0..router.slots().len()).any(|slot| router.is_used(slot)) {
        // No event: no partition, as the report has no rank for it.
        let why = crate::ingest::no_events_reason(&read);
        stats.empty.push((path.to_path_buf(), why));
        return Ok(stats);
    }
    if let Some(cut) = read.cut.as_ref().filter(|_| plan.warn_cuts) {
        let what = cut.describe(read.format);
        unitrace_core::cli::warn(crate::TOOL, format!("{}: {what}", path.display()));
    }
    for w in &read.warnings {
        unitrace_core::cli::warn(crate::TOOL, format!("{}: {w}", path.display()));
    }
    // The partition of each rank slot, if it is exported.
    let slot_rank = exported_ranks(plan, &read, path, input_index, several);
    let mut todo = vec![false; slot_rank.len()];
    for (slot, rank) in slot_rank.iter().enumerate() {
        let Some(rank) = *rank else { continue };
        {
            let mut c = claims.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(other) = c.insert(rank, path.display().to_string()) {
                bail!(
                    "rank {rank} is in both {other} and {}: one partition per rank",
                    path.display()
                );
            }
        }
        if complete(plan.out, rank, source, &plan.schema_name) {
            stats.ranks_skipped += 1;
        } else {
            todo[slot] = true;
        }
    }
    if !todo.iter().any(|&t| t) {
        return Ok(stats);
    }
    let mut sinks: Vec<Option<RankSink>> = Vec::with_capacity(todo.len());
    for (slot, &t) in todo.iter().enumerate() {
        sinks.push(match (t, slot_rank[slot]) {
            (true, Some(rank)) => Some(RankSink::new(
                staging.rank_dir(rank)?,
                rank_dir(plan.out, rank),
            )),
            _ => None,
        });
    }
    let mut rows = RowPass {
        index: &index,
        classifier: Classifier::new(plan.schema),
        name_rows: Vec::new(),
        track_rows: Vec::new(),
        cat_names: Vec::new(),
        sinks,
        host_spans: index.ranks.iter().map(|r| r.host_span()).collect(),
    };
    match spool {
        Some(spool) => {
            let names = &read.names;
            spool.replay(|slot, s, keys| rows.row(names, slot, s, Some(keys)))?;
            stats.dropped += index.dropped;
        }
        None => {
            let mut second = SecondRead {
                rows: &mut rows,
                dropped: 0,
                failed: None,
            };
            // The first read's names: the ids the index kept resolve from
            // the first row on (a launch call is written after its kernel).
            let again = timeline::read_file_with_names(path, read.names, &mut second);
            source_result(again, second.failed.take())?;
            stats.dropped += second.dropped;
        }
    }
    for (slot, sink) in rows.sinks.into_iter().enumerate() {
        let Some(sink) = sink else { continue };
        let (n, parts) = sink.finish(&Marker {
            format: MARKER_FORMAT.to_string(),
            version: MARKER_VERSION,
            source: path.display().to_string(),
            source_bytes: source.bytes,
            source_modified_ns: source.modified_ns,
            schema: plan.schema_name.clone(),
            rows: 0,
            parts: 0,
        })?;
        debug_assert!(slot_rank[slot].is_some());
        stats.rows += n;
        stats.parts += parts;
        stats.ranks_written += 1;
    }
    Ok(stats)
}

/// The outcome of a read through the source: its error, or the sink's own
/// when the sink stopped it (`failed`).
fn source_result(
    read: Result<TimelineRead, SourceError>,
    failed: Option<anyhow::Error>,
) -> Result<TimelineRead> {
    match read {
        Ok(read) => Ok(read),
        Err(SourceError::Input(e)) => Err(e.into()),
        Err(SourceError::Sink(e)) => Err(failed.unwrap_or_else(|| e.into())),
    }
}

/// The partition of each rank slot the source found, `None` for a slot
/// not exported (not asked for by `--ranks`, or without events). A trace
/// without any rank is partition `rank=<its position among the inputs>`
/// (docs/tracestat.md#events).
fn exported_ranks(
    plan: &EventsPlan<'_>,
    read: &TimelineRead,
    path: &Path,
    input_index: usize,
    several: bool,
) -> Vec<Option<u32>> {
    let router = &read.router;
    let slots = router.slots();
    let mut slot_rank = Vec::with_capacity(slots.len());
    for (slot, identity) in slots.iter().enumerate() {
        let used = router.is_used(slot);
        let rank = match identity.rank {
            Some(r) => Some(r),
            None if slot == 0 && (used || slots.len() == 1) => {
                if several {
                    unitrace_core::cli::warn(
                        crate::TOOL,
                        format!(
                            "{}: no rank in its path, process names or run information; exported as rank={input_index}",
                            path.display()
                        ),
                    );
                }
                Some(input_index as u32)
            }
            None => None,
        };
        let wanted = rank.filter(|&r| {
            (used || slots.len() == 1) && plan.ranks.is_none_or(|set| set.contains(r))
        });
        slot_rank.push(wanted);
    }
    slot_rank
}

/// The parts of one rank being written.
struct RankSink {
    /// Where the parts are written: the rank's folder in the run's
    /// [`Staging`], renamed to `dest` once the rank is complete.
    staging: PathBuf,
    /// `DIR/rank=N`, which errors name.
    dest: PathBuf,
    writer: Option<ParquetWriter<AtomicFile>>,
    part: u64,
    rows: u64,
    rows_in_part: u64,
}

impl RankSink {
    fn new(staging: PathBuf, dest: PathBuf) -> RankSink {
        RankSink {
            staging,
            dest,
            writer: None,
            part: 0,
            rows: 0,
            rows_in_part: 0,
        }
    }

    fn writer(&mut self) -> Result<&mut ParquetWriter<AtomicFile>> {
        if self.rows_in_part >= PART_ROWS {
            self.close_part()?;
        }
        if self.writer.is_none() {
            let path = self.dest.join(part_name(self.part));
            let file = AtomicFile::create(&self.staging.join(part_name(self.part)))
                .map_err(|e| InputError::io(&path, &e))?;
            let w = ParquetWriter::new(file, &schema()).map_err(|e| InputError::io(&path, &e))?;
            self.writer = Some(w);
        }
        Ok(self.writer.as_mut().expect("opened above"))
    }

    fn end_row(&mut self) -> Result<()> {
        if let Some(w) = &mut self.writer {
            if let Err(e) = w.end_row() {
                let path = self.dest.join(part_name(self.part));
                return Err(InputError::io(&path, &e).into());
            }
        }
        self.rows += 1;
        self.rows_in_part += 1;
        Ok(())
    }

    fn close_part(&mut self) -> Result<()> {
        if let Some(w) = self.writer.take() {
            let path = self.dest.join(part_name(self.part));
            let file = w.finish().map_err(|e| InputError::io(&path, &e))?;
            file.commit().map_err(|e| InputError::io(&path, &e))?;
            self.part += 1;
            self.rows_in_part = 0;
        }
        Ok(())
    }

    /// Commits the last part and the marker, then publishes the rank's
    /// folder; returns (rows, parts).
    fn finish(mut self, marker: &Marker) -> Result<(u64, u64)> {
        self.close_part()?;
        let marker = Marker {
            rows: self.rows,
            parts: self.part,
            ..marker.clone()
        };
        let mut text = serde_json::to_vec_pretty(&marker)?;
        text.push(b'\n');
        write_atomic(&self.staging.join(MARKER), &text)
            .map_err(|e| InputError::io(&self.dest.join(MARKER), &e))?;
        publish_dir(&self.staging, &self.dest).map_err(|e| InputError::io(&self.dest, &e))?;
        Ok((self.rows, self.part))
    }
}

/// Per name, what its rows repeat, worked out once per distinct name.
struct NameRow {
    name: Box<str>,
    /// The name without shape.
    short: Box<str>,
    /// Device commands: what the `kind` and `category` columns are made of.
    device: Option<DeviceName>,
}

/// The kind and category inputs of a device command's name.
struct DeviceName {
    /// The name is a memory command's (docs/tracestat.md#classification).
    memory: bool,
    /// The schema's category, and its class (`None`: no schema or no match).
    category: Box<str>,
    class: Option<Class>,
    /// Whether `category` is the name of a built-in [`Class`] (as it is
    /// without a schema): then the row's final class is the category.
    category_is_class: bool,
    /// The built-in class by name.
    builtin: Class,
}

/// The cached [`NameRow`] of `id` (device fields filled on first use by a
/// device row).
fn name_row<'n>(
    rows: &'n mut Vec<Option<NameRow>>,
    classifier: &mut Classifier<'_>,
    names: &Names,
    id: NameId,
    device: bool,
) -> &'n NameRow {
    let i = id.index();
    if rows.len() <= i {
        rows.resize_with(i + 1, || None);
    }
    let row = rows[i].get_or_insert_with(|| NameRow {
        name: names.name(id).into(),
        short: normalize_kernel_name(names.name(id)).into(),
        device: None,
    });
    if device && row.device.is_none() {
        let name = names.name(id);
        let k = classifier.kind(name);
        row.device = Some(DeviceName {
            memory: is_memory_command(name),
            category_is_class: Class::ALL.iter().any(|c| c.name() == k.category),
            category: k.category.into_boxed_str(),
            class: k.class,
            builtin: builtin_class(name),
        });
    }
    row
}

/// Per track of the spool, its process and thread names (looked up once
/// per track instead of once per row).
#[derive(Clone, Copy)]
struct TrackRow<'a> {
    process: Option<&'a str>,
    thread: Option<&'a str>,
}

/// The rows of one file, from its complete index.
struct RowPass<'a, 's> {
    index: &'a FileIndex,
    classifier: Classifier<'s>,
    name_rows: Vec<Option<NameRow>>,
    /// By [`RowKeys::track`].
    track_rows: Vec<Option<TrackRow<'a>>>,
    /// The categories' names, by [`CatId`].
    cat_names: Vec<Box<str>>,
    /// By rank slot.
    sinks: Vec<Option<RankSink>>,
    host_spans: Vec<Option<Ns>>,
}

/// The second read of [`Passes::Two`]: each event's row, in its rank slot
/// (the same as the first read's: the same file through the same rules).
struct SecondRead<'r, 'a, 's> {
    rows: &'r mut RowPass<'a, 's>,
    dropped: u64,
    /// Why the read was stopped: a part could not be written.
    failed: Option<anyhow::Error>,
}

impl SecondRead<'_, '_, '_> {
    fn row(&mut self, names: &Names, slot: RankSlot, s: &Slice<'_>) -> std::io::Result<()> {
        match self.rows.row(names, slot, s, None) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.failed = Some(e);
                Err(std::io::Error::other("events row failed"))
            }
        }
    }
}

impl TraceSink for SecondRead<'_, '_, '_> {
    fn device_op(&mut self, names: &Names, op: &DeviceOp) -> std::io::Result<()> {
        if op.name == NameId::NONE {
            return Ok(());
        }
        self.row(names, op.rank, &Slice::device(op))
    }

    fn host_span(&mut self, names: &Names, span: &HostSpan<'_>) -> std::io::Result<()> {
        self.row(names, span.rank, &Slice::host(span))
    }

    fn other_span(&mut self, names: &Names, span: &OtherSpan) -> std::io::Result<()> {
        self.row(names, span.rank, &Slice::other(span))
    }

    fn dropped(&mut self, _: &Dropped<'_>) {
        self.dropped += 1;
    }
}

/// What a row says beyond its event: kind, host range, launch, category.
struct RowContext<'n> {
    kind: RowKind,
    /// The innermost host range around the event (a device command: around
    /// its launch).
    host_range: Option<NameId>,
    /// `(call, latency)` of a flow-linked device command.
    launch: Option<(Option<NameId>, Ns)>,
    /// The `category` string with its key: the class's number, or past
    /// the classes the name's id (the schema's category of that name).
    category: Option<(u32, &'n str)>,
}

impl RowPass<'_, '_> {
    /// Writes the row of slice `s` of rank slot `slot` (none when its
    /// rank is not exported or the slice is left out). With the spool's
    /// `keys` (the single pass), the strings go to the writer keyed by
    /// them; without (the reference second read), by value.
    fn row(
        &mut self,
        names: &Names,
        slot: RankSlot,
        s: &Slice<'_>,
        keys: Option<RowKeys>,
    ) -> Result<()> {
        let RowPass {
            index,
            classifier,
            name_rows,
            track_rows,
            cat_names,
            sinks,
            host_spans,
        } = self;
        let Some(Some(sink)) = sinks.get_mut(slot) else {
            return Ok(());
        };
        let rank = &index.ranks[slot];
        let end = if s.closed {
            s.end
        } else if rank.last >= s.start {
            rank.last
        } else {
            return Ok(());
        };
        let is_device = matches!(s.side, Side::Device { .. });
        // Longer than the host's whole run: left out, as the report does
        // (docs/tracestat.md#implausible-events).
        if is_device && host_spans[slot].is_some_and(|span| end - s.start > span) {
            return Ok(());
        }
        let row = name_row(name_rows, classifier, names, s.name, is_device);
        let cx = context(index, slot, s, end, row);
        let index: &FileIndex = index;
        let track_of = || TrackRow {
            process: index.processes.get(&s.pid).map(String::as_str),
            thread: index.threads.get(&(s.pid, s.tid)).map(String::as_str),
        };
        let track = match keys {
            Some(k) => {
                let t = k.track as usize;
                if track_rows.len() <= t {
                    track_rows.resize(t + 1, None);
                }
                *track_rows[t].get_or_insert_with(track_of)
            }
            None => track_of(),
        };
        let c = s.cat.0 as usize;
        while cat_names.len() <= c {
            cat_names.push(names.cat_name(CatId(cat_names.len() as u32)).into());
        }
        let cat = &*cat_names[c];
        let w = sink.writer()?;
        // Strings go in with a key (a name id, a kind's index, the spool's
        // track, category and communicator numbers): the writer looks them
        // up by key instead of hashing each value (docs/tracestat.md#events).
        w.push_i64(col::PID, s.pid as i64);
        w.push_i64(col::TID, s.tid as i64);
        match keys {
            Some(k) => {
                push_opt_key(w, col::PROCESS, k.track, track.process);
                push_opt_key(w, col::THREAD, k.track, track.thread);
                w.push_key(col::CAT, k.cat, cat);
            }
            None => {
                push_opt_str(w, col::PROCESS, track.process);
                push_opt_str(w, col::THREAD, track.thread);
                w.push_str(col::CAT, cat);
            }
        }
        w.push_key(col::KIND, cx.kind as u32, cx.kind.name());
        w.push_key(col::NAME, s.name.0, &row.name);
        w.push_key(col::SHORT_NAME, s.name.0, &row.short);
        match cx.category {
            Some((key, c)) => w.push_key(col::CATEGORY, key, c),
            None => w.push_null(col::CATEGORY),
        }
        w.push_i64(col::START, s.start);
        w.push_i64(col::DURATION, end - s.start);
        match s.instance {
            Some(i) => w.push_i64(col::INSTANCE, i as i64),
            None => w.push_null(col::INSTANCE),
        }
        push_opt_name(w, col::HOST_RANGE, names, cx.host_range);
        match cx.launch {
            Some((call, latency)) => {
                push_opt_name(w, col::LAUNCH_CALL, names, call);
                w.push_i64(col::LAUNCH_LATENCY, latency);
            }
            None => {
                w.push_null(col::LAUNCH_CALL);
                w.push_null(col::LAUNCH_LATENCY);
            }
        }
        match s.bytes {
            Some(b) => w.push_i64(col::BYTES, b as i64),
            None => w.push_null(col::BYTES),
        }
        match keys.and_then(|k| k.comm) {
            Some(key) => push_opt_key(w, col::COMM, key, s.comm),
            None => push_opt_str(w, col::COMM, s.comm),
        }
        sink.end_row()
    }
}

/// The kind, host range, launch and category of the row of `s` (ending
/// at `end`) of rank slot `slot`, from the file's index.
fn context<'n>(
    index: &FileIndex,
    slot: RankSlot,
    s: &Slice<'_>,
    end: Ns,
    row: &'n NameRow,
) -> RowContext<'n> {
    let rank = &index.ranks[slot];
    let tree_of = |tid: u64| rank.trees.get(&tid).unwrap_or(&NO_RANGES);
    let tree = tree_of(s.tid);
    match s.side {
        Side::Device { memory } => {
            let d = row.device.as_ref().expect("filled for device rows");
            let kind = if memory || d.memory {
                RowKind::Memory
            } else {
                RowKind::Kernel
            };
            let l = s.flow.and_then(|id| rank.flows.get(id)).copied();
            let (host_range, in_collective) = match l {
                Some(l) => {
                    let tree = tree_of(l.tid);
                    let r = tree.innermost(l.ts);
                    (tree.name(r), tree.in_collective(r))
                }
                None => (None, false),
            };
            let schema_category = (Class::ALL.len() as u32 + s.name.0, &*d.category);
            // The category the kernel table groups by
            // (docs/tracestat.md#classification): the schema's, or
            // without a match or a schema, the final built-in class.
            let category = match d.class {
                Some(_) => schema_category,
                None if d.category_is_class => {
                    let mut c = d.builtin;
                    if c != Class::Communication && index.copy_engines.contains(&(s.pid, s.tid)) {
                        c = Class::Memory;
                    }
                    if in_collective {
                        c = Class::Communication;
                    }
                    (c as u32, c.name())
                }
                None => schema_category,
            };
            RowContext {
                kind,
                host_range,
                launch: l.map(|l| (l.call, s.start - l.ts)),
                category: Some(category),
            }
        }
        Side::Host { range, collective } => {
            let kind = if collective {
                RowKind::Collective
            } else if range {
                RowKind::HostRange
            } else {
                RowKind::ApiCall
            };
            let r = if range {
                tree.parent_of(s.start, end, s.name)
            } else {
                tree.innermost(s.start)
            };
            RowContext {
                kind,
                host_range: tree.name(r),
                launch: None,
                category: None,
            }
        }
        Side::Other => RowContext {
            kind: RowKind::Other,
            host_range: tree.name(tree.innermost(s.start)),
            launch: None,
            category: None,
        },
    }
}

/// The name of id `v` into string column `c`, keyed by its id; null for none.
fn push_opt_name(w: &mut ParquetWriter<AtomicFile>, c: usize, names: &Names, v: Option<NameId>) {
    match v {
        Some(id) => w.push_key(c, id.0, names.name(id)),
        None => w.push_null(c),
    }
}

fn push_opt_key(w: &mut ParquetWriter<AtomicFile>, c: usize, key: u32, v: Option<&str>) {
    match v {
        Some(v) => w.push_key(c, key, v),
        None => w.push_null(c),
    }
}

fn push_opt_str(w: &mut ParquetWriter<AtomicFile>, c: usize, v: Option<&str>) {
    match v {
        Some(v) => w.push_str(c, v),
        None => w.push_null(c),
    }
}

/// Refuses an events directory that is an existing file (an input given
/// by mistake, say): the dataset is a directory of partitions.
pub fn check_out_dir(out: &Path, inputs: &[&Path]) -> Result<()> {
    if out.is_file() {
        return Err(anyhow!(
            "--events {}: is a file, not a directory",
            out.display()
        ));
    }
    for i in inputs {
        if unitrace_core::atomic::same_output_path(out, i) {
            bail!("--events {}: is an input", out.display());
        }
    }
    Ok(())
}
