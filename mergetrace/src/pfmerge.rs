//! The merge of `.pftrace` inputs (unitrace `--output-format protobuf`,
//! docs/formats.md#pftrace).
//!
//! The output holds the packets of the inputs in input order, each record
//! copied byte for byte unless something in it must change
//! (docs/compatibility.md#mergetrace-pftrace). Unlike the original's byte
//! concatenation it keeps the inputs apart: flow ids and track uuids of
//! each input its own, and with `--remap-pids` pids/tids renumbered per
//! input; without it, a pid that two inputs share is warned about
//! (Perfetto shows them as one process). Those edits, and how a record is
//! patched or re-encoded, are `unitrace_core::pftrace_merged_input`'s,
//! which tracestat's annotated trace makes too. Without `--filter`,
//! `--time-window`, `--stats` and link tagging a packet is only read as far
//! as its edits need (docs/benchmarks.md#mergetrace-on-pftrace). A second
//! thread writes the output in 1 MiB chunks.
//!
//! `--filter` keeps descriptors and clock snapshots, and a slice end when
//! its begin was kept; `--time-window` needs each slice's end, so with a
//! window every input is read twice (a first pass marks the slices that
//! overlap it; memory: one bit per slice begin). `--stats` hands every
//! packet it keeps, unedited, to the trace source's `.pftrace` interpreter
//! (`crate::stats`).

use std::io::Write;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use anyhow::Result;
use rustc_hash::FxHashMap;
use unitrace_core::cli::warn;
use unitrace_core::pftrace::{
    EventType, PacketData, PacketReader, PftraceError, PftraceErrorKind, PftraceSummary,
    RewriteBuffers, TrackEvent,
};
use unitrace_core::pftrace_merged_input::{
    write_edited, write_shallow, InputRecords, MergedTracks,
};
use unitrace_core::timeline::gzip::GzipDamage;
use unitrace_core::timeline::{Cut, TimelineFormat};
use unitrace_core::trace::decimal::Decimal;

use crate::merge::{InputPlan, MergeOptions, MergeOutcome};
use crate::select::{ns_to_us, Window};
use crate::stats::{InputStats, Summarizer};

const TOOL: &str = "mergetrace";

/// A µs shift (`--align start`) in whole nanoseconds.
fn shift_ns(shift: Option<Decimal>) -> i128 {
    let Some(s) = shift else { return 0 };
    match s.rescale(3) {
        Some(d) => d.mantissa(),
        None => {
            // More than 3 decimals: round to the nanosecond.
            (s.to_f64() * 1000.0).round() as i128
        }
    }
}

/// Per-track stacks of whether each open slice was kept (`--filter`,
/// `--time-window`), keyed by the input's own track uuid.
type KeptStacks = FxHashMap<u64, Vec<bool>>;

/// Merges `.pftrace` inputs into `out`.
///
/// Two threads: this one reads, decodes and edits; a writer thread writes
/// 1 MiB chunks (so the output's copies into the kernel overlap the
/// decoding, as the JSON merge overlaps scanning and writing).
pub fn merge<W: Write + Send>(
    plans: &[InputPlan],
    opts: &MergeOptions,
    out: W,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<(W, MergeOutcome)> {
    through_writer_thread(out, |chunks| merge_into(plans, opts, chunks, progress))
}

/// Runs `work` with a [`ChunkWriter`] whose chunks a second thread writes
/// to `out`; returns `out` and the work's result. A write error stops the
/// writer first and is reported rather than the closed channel the work
/// then sees.
fn through_writer_thread<W: Write + Send, T>(
    out: W,
    work: impl FnOnce(&mut ChunkWriter) -> Result<T>,
) -> Result<(W, T)> {
    let (tx, rx) = sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT);
    let (free_tx, free_rx) = sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT + 2);
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || -> std::io::Result<W> {
            let mut out = out;
            for mut chunk in rx {
                out.write_all(&chunk)?;
                chunk.clear();
                let _ = free_tx.try_send(chunk);
            }
            Ok(out)
        });
        let mut chunks = ChunkWriter {
            tx,
            free: free_rx,
            buf: Vec::with_capacity(CHUNK),
        };
        let result =
            work(&mut chunks).and_then(|value| chunks.finish().map(|()| value).map_err(Into::into));
        drop(chunks);
        let written = writer
            .join()
            .map_err(|_| anyhow::anyhow!("the output writer thread panicked"))?;
        let out = written?;
        Ok((out, result?))
    })
}

const CHUNK: usize = 1 << 20;
const CHUNKS_IN_FLIGHT: usize = 4;

/// Collects output into chunks handed to the writer thread.
struct ChunkWriter {
    tx: SyncSender<Vec<u8>>,
    free: Receiver<Vec<u8>>,
    buf: Vec<u8>,
}

impl ChunkWriter {
    fn send(&mut self) -> std::io::Result<()> {
        let mut next = self
            .free
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        next.clear();
        let full = std::mem::replace(&mut self.buf, next);
        self.tx
            .send(full)
            .map_err(|_| std::io::Error::other("output writer stopped"))
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.send()?;
        }
        Ok(())
    }
}

impl Write for ChunkWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn merge_into(
    plans: &[InputPlan],
    opts: &MergeOptions,
    out: &mut ChunkWriter,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<MergeOutcome> {
    let mut merged = MergedTracks::default();
    // Process pid -> first input that described it (the shared-pid
    // warning).
    let mut pid_owner: FxHashMap<i64, usize> = FxHashMap::default();
    let mut outcome = MergeOutcome::default();
    let mut summarizer = opts.stats.as_ref().map(Summarizer::new);
    let mut bufs = RewriteBuffers::default();
    let mut rewritten = Vec::new();
    let mut done_bytes = 0u64;
    for (index, plan) in plans.iter().enumerate() {
        let path = &plan.path;
        // A read error of the first pass comes again in the second, which
        // reports it once.
        let window_keep = opts
            .window
            .as_ref()
            .map(|w| window_pass(path, w, shift_ns(plan.shift)));
        let label = match (opts.remap_pids && plan.rank_from_name, plan.rank) {
            (true, Some(r)) => Some(format!("rank {r} ")),
            _ => None,
        };
        let mut edit = InputRecords::new(index, &mut merged).labelled(label);
        if opts.remap_pids {
            edit = edit.renumbering_pids();
        }
        edit.shift_ns = shift_ns(plan.shift);
        edit.link_tag = plan.link_tag.as_deref();
        let mut stats = opts
            .stats
            .as_ref()
            .map(|_| InputStats::pftrace(&plan.path, index));
        let mut kept: KeptStacks = FxHashMap::default();
        let mut begins = 0usize;
        let mut shared_pids: Vec<(i64, usize)> = Vec::new();
        let input =
            crate::input::open_input(path).map_err(|e| unitrace_core::InputError::io(path, &e))?;
        let gzip = input.gzip;
        let mut reader = PacketReader::new(input.stream);
        // Without filters, statistics or link tagging a packet is read only
        // as far as its edits need (`PacketView`): track uuid, flow ids,
        // timestamp; descriptors take the full path below.
        let shallow = opts.filter.is_none()
            && window_keep.is_none()
            && opts.stats.is_none()
            && edit.link_tag.is_none();
        let result: Result<(), PftraceError> = loop {
            let rec = match reader.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            };
            if shallow {
                match write_shallow(&rec, &mut edit, &mut bufs, &mut rewritten, out)? {
                    Ok(true) => {
                        outcome.events_written += 1;
                        continue;
                    }
                    Ok(false) => {}
                    Err(e) => break Err(e),
                }
            }
            let packet = match rec.decode() {
                Ok(p) => p,
                Err(e) => break Err(e),
            };
            if let PacketData::TrackEvent(e) = packet.data {
                let keep = keep_event(
                    &e,
                    opts,
                    &mut kept,
                    window_keep.as_deref(),
                    &mut begins,
                    packet.timestamp,
                    edit.shift_ns,
                );
                if !keep {
                    continue;
                }
            } else if let PacketData::TrackDescriptor(d) = packet.data {
                if let (false, Some(pid)) = (opts.remap_pids, d.process.and_then(|p| p.pid)) {
                    let owner = *pid_owner.entry(pid.into()).or_insert(index);
                    if owner != index && !shared_pids.iter().any(|&(p, _)| p == i64::from(pid)) {
                        shared_pids.push((pid.into(), owner));
                    }
                }
            }
            if let Some(st) = stats.as_mut() {
                // The packet as the input has it: the statistics of a rank
                // do not depend on `--align`'s shift.
                st.packet(&packet, rec.packet_offset())?;
            }
            if edit.changes(&packet) {
                write_edited(&rec, &mut edit, &mut bufs, &mut rewritten, out)?;
            } else {
                out.write_all(rec.raw)?;
            }
            outcome.events_written += 1;
        };
        if let Err(e) = result {
            fail(e, path, opts, index, plans.len())?;
        } else {
            let damage = gzip.as_ref().and_then(|w| w.damage());
            report_summary(path, reader.summary(), damage.as_ref());
        }
        for (pid, owner) in shared_pids {
            warn(
                TOOL,
                format!(
                    "{}: process pid {pid} also described by {}: Perfetto shows them as one \
                     process (--remap-pids keeps them apart)",
                    path.display(),
                    plans[owner].path.display()
                ),
            );
        }
        if let (Some(st), Some(summarizer)) = (stats, summarizer.as_mut()) {
            let traces = st.finish_pftrace(reader.summary())?;
            outcome.ranks.extend(summarizer.summarize(traces, path));
        }
        done_bytes += reader.summary().bytes;
        if let Some(pb) = progress {
            pb.set_position(done_bytes);
        }
    }
    Ok(outcome)
}

/// A bad input: with `--skip-invalid` a warning (its complete packets
/// before the problem are kept), else the error.
fn fail(e: PftraceError, path: &Path, opts: &MergeOptions, index: usize, n: usize) -> Result<()> {
    let changed = matches!(&e.kind, PftraceErrorKind::Io(io)
        if unitrace_core::watched_file::ChangedWhileRead::of(io).is_some());
    let e = e.into_input_error(path);
    if changed {
        // Never merged in part (docs/robustness.md#changed-inputs).
        Err(e.into())
    } else if opts.skip_invalid {
        warn(TOOL, format!("{e}; skipping the rest of this file"));
        Ok(())
    } else if index + 1 < n {
        Err(anyhow::anyhow!(
            "{e} (--skip-invalid merges the other files)"
        ))
    } else {
        Err(e.into())
    }
}

/// One-line warnings for what a finished read found (`gzip`: what ended a
/// gzipped input's stream, docs/robustness.md#gzip).
pub fn report_summary(path: &Path, s: &PftraceSummary, gzip: Option<&GzipDamage>) {
    let p = path.display();
    let gzip_cut = match gzip {
        Some(GzipDamage::Cut(at)) => Some(*at),
        _ => None,
    };
    let cut = |dropped_bytes| Cut {
        dropped_bytes,
        line: None,
        partial_event: true,
        gzip: gzip_cut,
    };
    if s.packets == 0 && (s.truncation.is_some() || gzip_cut.is_some()) {
        // Cut before its first packet: nothing merged, in tracestat's
        // words (docs/errors.md).
        warn(TOOL, format!("{p}: {}; skipped", cut(0).describe_empty()));
        return;
    }
    if s.bytes == 0 {
        warn(TOOL, format!("{p}: empty file, skipped"));
        return;
    }
    if let Some(t) = &s.truncation {
        let what = if gzip_cut.is_some() {
            "gzip stream"
        } else {
            "trace"
        };
        warn(
            TOOL,
            format!(
                "{p}: {what} cut short at byte {} (writer killed?): kept {} complete packets, \
                 dropped {} bytes",
                t.offset, s.packets, t.dropped_bytes
            ),
        );
    } else if gzip_cut.is_some() {
        let what = cut(0).describe(TimelineFormat::Pftrace);
        warn(TOOL, format!("{p}: {what}"));
    }
    if let Some(trailing @ GzipDamage::Trailing { .. }) = gzip {
        warn(TOOL, format!("{p}: {}", trailing.describe()));
    }
}

/// Whether a track event passes `--filter` and `--time-window`; a slice end
/// follows its begin.
fn keep_event(
    e: &TrackEvent<'_>,
    opts: &MergeOptions,
    kept: &mut KeptStacks,
    window_keep: Option<&[u64]>,
    begins: &mut usize,
    ts: Option<u64>,
    shift: i128,
) -> bool {
    if opts.filter.is_none() && window_keep.is_none() {
        return true;
    }
    let track = e.track_uuid.unwrap_or(0);
    match e.kind {
        EventType::SliceEnd => kept
            .get_mut(&track)
            .and_then(Vec::pop)
            // An end without a begin is passed through.
            .unwrap_or(true),
        kind => {
            let mut keep = name_matches(e, opts);
            if kind == EventType::SliceBegin {
                let ordinal = *begins;
                *begins += 1;
                if let Some(bits) = window_keep {
                    keep &= bit(bits, ordinal);
                }
                kept.entry(track).or_default().push(keep);
            } else if let (Some(w), Some(ts)) = (&opts.window, ts) {
                keep &= w.overlaps(ns_to_us(shifted(ts, shift)), None);
            }
            keep
        }
    }
}

fn name_matches(e: &TrackEvent<'_>, opts: &MergeOptions) -> bool {
    match &opts.filter {
        None => true,
        Some(re) => e.name_str().is_some_and(|n| re.is_match(&n)),
    }
}

fn shifted(ts: u64, shift: i128) -> u64 {
    u64::try_from((i128::from(ts) - shift).max(0)).unwrap_or(u64::MAX)
}

fn set(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1 << (i % 64);
}

fn bit(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
}

/// First pass for `--time-window`: one bit per slice begin (in file order),
/// set when `[begin, end]` overlaps the window (a begin without an end
/// counts as an instant). It stops at the first unreadable packet, as the
/// second pass will.
fn window_pass(path: &Path, w: &Window, shift: i128) -> Vec<u64> {
    let mut bits: Vec<u64> = Vec::new();
    let Ok(file) = crate::input::open_stream(path) else {
        return bits;
    };
    let mut reader = PacketReader::new(file);
    let mut begins = 0usize;
    let mut open: FxHashMap<u64, Vec<(usize, u64)>> = FxHashMap::default();
    while let Ok(Some(rec)) = reader.next_record() {
        let Ok(p) = rec.decode() else { break };
        let (PacketData::TrackEvent(e), Some(ts)) = (p.data, p.timestamp) else {
            continue;
        };
        let ts = shifted(ts, shift);
        let track = e.track_uuid.unwrap_or(0);
        match e.kind {
            EventType::SliceBegin => {
                if begins & 63 == 0 {
                    bits.push(0);
                }
                open.entry(track).or_default().push((begins, ts));
                begins += 1;
            }
            EventType::SliceEnd => {
                if let Some((i, start)) = open.get_mut(&track).and_then(Vec::pop) {
                    let dur = ts.saturating_sub(start);
                    if w.overlaps(ns_to_us(start), Some(ns_to_us(dur))) {
                        set(&mut bits, i);
                    }
                }
            }
            _ => {}
        }
    }
    for (i, start) in open.into_values().flatten() {
        if w.overlaps(ns_to_us(start), None) {
            set(&mut bits, i);
        }
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_reach_the_output_whole_and_in_order() {
        // Far more than the chunks in flight, so buffers are recycled.
        let data: Vec<u8> = (0..(CHUNK * (CHUNKS_IN_FLIGHT + 5) + 12345))
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let (out, n) = through_writer_thread(Vec::new(), |w| {
            for piece in data.chunks(4099) {
                w.write_all(piece)?;
            }
            Ok(7)
        })
        .unwrap();
        assert_eq!(n, 7);
        assert_eq!(out.len(), data.len());
        assert!(out == data);
    }

    #[test]
    fn a_write_error_is_reported() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk full"))
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let e = through_writer_thread(Full, |w| {
            for _ in 0..(CHUNKS_IN_FLIGHT + 8) {
                w.write_all(&[0; CHUNK])?;
            }
            Ok(())
        })
        .err()
        .unwrap();
        assert!(e.to_string().contains("disk full"), "{e}");
    }
}
