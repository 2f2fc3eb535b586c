//! One input's events as a merged trace JSON holds them: the edits
//! mergetrace makes to a PyTorch profiler (Kineto) input, and to every
//! input under `--remap-pids` (docs/mergetrace.md#kineto), and tracestat's
//! annotated trace makes to its Kineto inputs
//! (docs/tracestat.md#annotated-trace), so that both keep ranks apart the
//! same way:
//!
//! * each input gets its own pid namespace: pids and tids renumbered 1, 2,
//!   3… across the merged trace in order of first appearance (one map per
//!   input for both, so that a main thread keeps tid == pid); a pid that is
//!   no integer (Kineto's `"Spans"`, `-1`) becomes one new process per
//!   text. Kineto's device pids are the device indices 0..N in every file;
//! * flow ids (`s`/`t`/`f`) get the input's position in bits 32+ (they stay
//!   below 2^53, exact in JavaScript viewers): flows are matched by
//!   `(cat, id)` across the whole trace, and Kineto's `ac2g` ids restart in
//!   every file;
//! * process names get the input's rank: `rank R ` before a `process_name`
//!   that names none (docs/formats.md#timeline-ranks), and a `process_name`
//!   `rank R` of its own before the first event of a process whose name
//!   has not come yet (Kineto writes every name after the events): a
//!   reader that goes front to back, as tracestat does, knows each event's
//!   rank when it meets it;
//! * times move onto the merged clock ([`EventEdits::shift_ts`], with
//!   [`clock_shifts`] for Kineto's clock bases,
//!   docs/formats.md#kineto-json-time).
//!
//! Each is an edit of the event's source bytes ([`EventEdits`]): the rest
//! of the event is copied as it was.

use std::fmt::Display;
use std::ops::Range;

use rustc_hash::{FxHashMap, FxHashSet};

use super::decimal::Decimal;
use super::{object_members, parse_u64, Event, Field};

/// Edits of one event's source text: byte ranges and their new text.
#[derive(Debug, Default)]
pub struct EventEdits {
    edits: Vec<(Range<usize>, Range<usize>)>,
    text: Vec<u8>,
    out: Vec<u8>,
}

impl EventEdits {
    /// Forgets the edits of the previous event.
    pub fn clear(&mut self) {
        self.edits.clear();
        self.text.clear();
    }

    /// Replaces `range` of the event's text by the `Display` of `with`,
    /// formatted straight into the reused text buffer.
    pub fn replace(&mut self, range: Range<usize>, with: impl Display) {
        use std::io::Write as _;
        let s = self.text.len();
        let _ = write!(self.text, "{with}");
        self.edits.push((range, s..self.text.len()));
    }

    /// The event's text with the edits made (`raw` itself when there is
    /// none).
    pub fn apply<'a>(&'a mut self, raw: &'a [u8]) -> &'a [u8] {
        if self.edits.is_empty() {
            return raw;
        }
        self.edits.sort_by_key(|e| e.0.start);
        self.out.clear();
        let mut at = 0;
        for (range, text) in &self.edits {
            self.out.extend_from_slice(&raw[at..range.start]);
            self.out.extend_from_slice(&self.text[text.clone()]);
            at = range.end;
        }
        self.out.extend_from_slice(&raw[at..]);
        &self.out
    }

    /// `ts` less `shift` (µs), in exact decimal arithmetic; the input's
    /// number of decimals is kept when the shift has no more (always so
    /// for unitrace's `%f` stamps and Kineto's nanosecond bases).
    pub fn shift_ts(&mut self, ev: &Event<'_>, shift: Decimal) {
        let (Some(span), Some(ts)) = (ev.fields().span(Field::Ts), ev.decimal(Field::Ts)) else {
            return;
        };
        if let Some(new) = ts.checked_sub(shift) {
            let new = new.rescale(ts.scale()).unwrap_or(new);
            self.replace(span.range(), new);
        }
    }
}

/// The process and thread ids of one merged trace, given out across its
/// inputs: 1, 2, 3…
#[derive(Debug, Default)]
pub struct MergedIds {
    last: u64,
}

impl MergedIds {
    fn next(&mut self) -> u64 {
        self.last += 1;
        self.last
    }
}

/// Inputs past this position keep their flow ids (the position would not
/// fit below 2^53 with a 32-bit id).
const MAX_FLOW_INPUT: usize = 1 << 20;
const FLOW_ID_LIMIT: u64 = 1 << 32;

/// What one input's renumbering keeps between its events.
#[derive(Debug, Default)]
pub struct InputIds {
    position: usize,
    /// The rank its process names get, when they are labelled.
    rank: Option<u32>,
    /// Integer pid or tid of the input -> its id in the merged trace.
    ids: FxHashMap<u64, u64>,
    /// Pids that are no integer, by their text -> id in the merged trace.
    text_ids: FxHashMap<Box<[u8]>, u64>,
    /// Processes (merged ids) whose rank a reader already knows.
    labelled: FxHashSet<u64>,
    large_flow_seen: bool,
}

/// What renumbering one event found besides its edits.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Renumbered {
    /// A `process_name` event to write before this one: the first event of
    /// a process of a labelled input whose name comes later.
    pub label_before: Option<String>,
    /// The input's first flow id of 2^32 or more (its text): left as it
    /// is, so it may meet another input's; said once per input.
    pub large_flow_id: Option<String>,
}

impl InputIds {
    /// The input at `position` of the merged trace; `rank`: the rank its
    /// processes are labelled with (`None`: names left as they are).
    pub fn new(position: usize, rank: Option<u32>) -> InputIds {
        InputIds {
            position,
            rank,
            ..InputIds::default()
        }
    }

    /// Adds to `edits` what puts `ev` into the merged trace's ids (module
    /// comment).
    pub fn renumber(
        &mut self,
        merged: &mut MergedIds,
        ev: &Event<'_>,
        edits: &mut EventEdits,
    ) -> Renumbered {
        let mut found = Renumbered::default();
        let is_process_name =
            ev.str_raw(Field::Ph) == Some(b"M") && ev.str_raw(Field::Name) == Some(b"process_name");
        if let Some(pid) = self.renumber_ids(merged, ev, edits) {
            if let Some(rank) = self.rank {
                if self.labelled.insert(pid) && !is_process_name {
                    found.label_before = Some(format!(
                        "{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {pid}, \"args\": {{\"name\": \"rank {rank}\"}}}}"
                    ));
                }
            }
        }
        if matches!(ev.str_raw(Field::Ph), Some(b"s" | b"t" | b"f")) {
            found.large_flow_id = self.flow_id(ev, edits);
        }
        if is_process_name {
            self.label_process(ev, edits);
        }
        found
    }

    /// Renumbers `pid` and `tid`; returns the new pid.
    fn renumber_ids(
        &mut self,
        merged: &mut MergedIds,
        ev: &Event<'_>,
        edits: &mut EventEdits,
    ) -> Option<u64> {
        let mut new_pid = None;
        for field in [Field::Pid, Field::Tid] {
            let Some(span) = ev.fields().span(field) else {
                continue;
            };
            let new = match ev.number_text(field).and_then(parse_u64) {
                Some(orig) => *self.ids.entry(orig).or_insert_with(|| merged.next()),
                // A tid that is no integer names a track inside its
                // process: it stays.
                None if field == Field::Pid => {
                    let text = &ev.raw()[span.range()];
                    match self.text_ids.get(text) {
                        Some(&id) => id,
                        None => {
                            let id = merged.next();
                            self.text_ids.insert(text.into(), id);
                            id
                        }
                    }
                }
                None => continue,
            };
            if field == Field::Pid {
                new_pid = Some(new);
            }
            edits.replace(span.range(), new);
        }
        new_pid
    }

    /// Puts the input's position into bits 32+ of a flow id; returns the
    /// text of the input's first id that does not fit.
    fn flow_id(&mut self, ev: &Event<'_>, edits: &mut EventEdits) -> Option<String> {
        let (span, text) = (ev.fields().span(Field::Id)?, ev.number_text(Field::Id)?);
        match parse_u64(text) {
            Some(id) if id < FLOW_ID_LIMIT && self.position < MAX_FLOW_INPUT => {
                edits.replace(span.range(), ((self.position as u64) << 32) | id);
                None
            }
            _ if !self.large_flow_seen => {
                self.large_flow_seen = true;
                Some(String::from_utf8_lossy(text).into_owned())
            }
            _ => None,
        }
    }

    /// Prefixes `rank R ` to a process name that names no rank.
    fn label_process(&self, ev: &Event<'_>, edits: &mut EventEdits) {
        let (Some(rank), Some(args_span)) = (self.rank, ev.fields().span(Field::Args)) else {
            return;
        };
        let args = &ev.raw()[args_span.range()];
        if args.first() != Some(&b'{') {
            return;
        }
        let Some((_, span)) = object_members(args).find(|(k, _)| *k == b"name") else {
            return;
        };
        let v = &args[span.range()];
        if v.len() < 2
            || v[0] != b'"'
            || v[1..].starts_with(b"RANK ")
            || v[1..].starts_with(b"rank ")
        {
            return;
        }
        let at = args_span.start as usize + span.start as usize + 1;
        edits.replace(at..at, format!("rank {rank} "));
    }
}

/// What every metric link unitrace writes holds (docs/formats.md#trace-json-metrics-link).
pub const METRIC_LINK_MARK: &[u8] = b"://localhost:8000/";

/// `link` with `?<tag>` appended (`&<tag>` when it has a query already),
/// when it is a metric link; `None` otherwise. uniview's in-memory merge
/// tags each input's links with its rank (docs/uniview.md#result-dir).
pub fn tagged_link(link: &[u8], tag: &str) -> Option<Vec<u8>> {
    let at = memchr::memmem::find(link, METRIC_LINK_MARK)?;
    if !link[..at].ends_with(b"http") && !link[..at].ends_with(b"https") {
        return None;
    }
    let mut out = Vec::with_capacity(link.len() + 12);
    out.extend_from_slice(link);
    let sep = if link.contains(&b'?') { "&" } else { "?" };
    out.extend_from_slice(sep.as_bytes());
    out.extend_from_slice(tag.as_bytes());
    Some(out)
}

/// The shift (µs, subtracted from `ts`) that puts each input with a clock
/// base (ns; Kineto's `baseTimeNanoseconds`) onto the earliest base:
/// `ts + (base − earliest) / 1000` (docs/formats.md#kineto-json-time).
/// `None` for inputs without a base, and for all when every base is the
/// same.
pub fn clock_shifts(bases: &[Option<i64>]) -> Vec<Option<Decimal>> {
    let earliest = bases.iter().flatten().min().copied();
    bases
        .iter()
        .map(|b| {
            let (b, e) = ((*b)?, earliest?);
            (b != e).then(|| Decimal::from_parts(i128::from(e) - i128::from(b), 3))
        })
        .collect()
}

/// The clock base (ns) a merge states: the earliest of its inputs',
/// onto which [`clock_shifts`] puts them all, when every input has one
/// (each a PyTorch profiler trace, docs/mergetrace.md#kineto); `None`
/// otherwise. Stated in the merge, it keeps the merged events on the
/// inputs' own clock.
pub fn merged_clock_base(bases: &[Option<i64>]) -> Option<i64> {
    let bases: Option<Vec<i64>> = bases.iter().copied().collect();
    bases?.into_iter().min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::TraceReader;

    /// Every event of `json` through one input's renumbering, as written.
    fn renumbered(json: &str, inputs: &[(usize, Option<u32>)]) -> Vec<String> {
        let mut merged = MergedIds::default();
        let mut edits = EventEdits::default();
        let mut out = Vec::new();
        for &(position, rank) in inputs {
            let mut ids = InputIds::new(position, rank);
            let mut reader = TraceReader::new(json.as_bytes());
            while let Some(ev) = reader.next_event().unwrap() {
                edits.clear();
                let found = ids.renumber(&mut merged, &ev, &mut edits);
                out.extend(found.label_before);
                out.push(String::from_utf8(edits.apply(ev.raw()).to_vec()).unwrap());
            }
        }
        out
    }

    const KINETO: &str = r#"{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.5, "dur": 1},
{"ph": "s", "cat": "ac2g", "id": 42, "pid": 3483, "tid": 3483, "ts": 9},
{"ph": "X", "cat": "Trace", "name": "t", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1, "dur": 1},
{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "python3"}},
{"name": "process_name", "ph": "M", "pid": 3483, "tid": 0, "args": {"name": "python3"}}
]}"#;

    #[test]
    fn ranks_get_their_own_ids_and_labels_before_their_events() {
        let out = renumbered(KINETO, &[(0, Some(0)), (1, Some(1))]);
        let label = |pid: u64, rank: u32| {
            format!("{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {pid}, \"args\": {{\"name\": \"rank {rank}\"}}}}")
        };
        assert_eq!(out[0], label(1, 0));
        assert!(out[1].contains("\"pid\": 1, \"tid\": 2,"), "{}", out[1]);
        assert_eq!(out[2], label(3, 0));
        // The main thread keeps tid == pid; the flow id is the first
        // input's own.
        assert!(
            out[3].contains("\"id\": 42, \"pid\": 3, \"tid\": 3,"),
            "{}",
            out[3]
        );
        assert_eq!(out[4], label(4, 0));
        assert!(
            out[5].contains("\"pid\": 4, \"tid\": \"PyTorch Profiler\""),
            "{}",
            out[5]
        );
        // The names that come later carry the rank, without a second label.
        // (Their tid 0 is the device's pid 0: one map for both.)
        assert!(
            out[6].contains("\"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"rank 0 python3\"}"),
            "{}",
            out[6]
        );
        assert!(out[7].contains("\"pid\": 3, \"tid\": 1,"), "{}", out[7]);
        assert_eq!(out.len(), 8 * 2);
        // The second input: new ids, its position in the flow id.
        assert_eq!(out[8], label(5, 1));
        assert!(
            out[11].contains(&format!("\"id\": {}, \"pid\": 7,", (1u64 << 32) | 42)),
            "{}",
            out[11]
        );
        assert!(
            out[14].contains("\"name\": \"rank 1 python3\""),
            "{}",
            out[14]
        );
    }

    #[test]
    fn names_that_come_first_or_carry_a_rank_get_no_label() {
        let unitrace = r#"[
{"ph": "M", "name": "process_name", "pid": 9, "args": {"name": "RANK 3 HOST<n>"}},
{"ph": "X", "name": "zeInit", "pid": 9, "tid": 9, "ts": 1, "dur": 1}
]"#;
        let out = renumbered(unitrace, &[(0, Some(3))]);
        assert_eq!(out.len(), 2);
        assert!(
            out[0].contains("\"pid\": 1, \"args\": {\"name\": \"RANK 3 HOST<n>\"}"),
            "{}",
            out[0]
        );
        // Without a rank, ids are renumbered and names left alone.
        let out = renumbered(KINETO, &[(0, None)]);
        assert_eq!(out.len(), 5);
        assert!(out[3].contains("\"name\": \"python3\""), "{}", out[3]);
    }

    #[test]
    fn large_flow_ids_stay_and_are_said_once() {
        let json = r#"[
{"ph": "s", "cat": "c", "id": 4294967296, "pid": 1, "ts": 1},
{"ph": "f", "cat": "c", "id": 4294967297, "pid": 1, "ts": 2}
]"#;
        let mut merged = MergedIds::default();
        let mut ids = InputIds::new(1, None);
        let mut edits = EventEdits::default();
        let mut reader = TraceReader::new(json.as_bytes());
        let mut said = Vec::new();
        while let Some(ev) = reader.next_event().unwrap() {
            edits.clear();
            said.push(ids.renumber(&mut merged, &ev, &mut edits).large_flow_id);
            assert!(String::from_utf8_lossy(edits.apply(ev.raw())).contains("\"id\": 429496729"));
        }
        assert_eq!(said, [Some("4294967296".to_string()), None]);
    }

    #[test]
    fn clock_bases_shift_onto_the_earliest() {
        let shifts = clock_shifts(&[Some(2_000_000_000), None, Some(1_000_000_000)]);
        assert_eq!(shifts[0], Some(Decimal::from_parts(-1_000_000_000, 3)));
        assert_eq!(shifts[1], None);
        assert_eq!(shifts[2], None);
        assert_eq!(clock_shifts(&[Some(5), Some(5)]), [None, None]);
        assert_eq!(merged_clock_base(&[Some(7), Some(5)]), Some(5));
        assert_eq!(merged_clock_base(&[Some(7), None]), None);
        assert_eq!(merged_clock_base(&[]), None);
        let json = r#"[{"ph": "X", "ts": 10.500000, "dur": 1}]"#;
        let mut reader = TraceReader::new(json.as_bytes());
        let ev = reader.next_event().unwrap().unwrap();
        let mut edits = EventEdits::default();
        edits.shift_ts(&ev, shifts[0].unwrap());
        assert_eq!(
            edits.apply(ev.raw()),
            br#"{"ph": "X", "ts": 1000010.500000, "dur": 1}"#
        );
    }
}
