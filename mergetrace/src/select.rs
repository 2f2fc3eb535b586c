//! Which inputs and which events to keep: ranks from file names, `--ranks`
//! lists, `--time-window` bounds, and the head of each trace (first
//! timestamp, `RANK N` label) for `--align` / `--time-window`.

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};
use unitrace_core::pftrace::{PacketData, PacketReader};
use unitrace_core::result_dir::TraceFormat;
use unitrace_core::trace::decimal::Decimal;
use unitrace_core::trace::{Field, TraceReader};

/// The MPI rank a unitrace file name carries: `<app>.<pid>.<rank>.json`
/// or `.pftrace` (docs/formats.md#trace-json) or a `rank_<r>.` result-dir folder
/// (docs/formats.md#result-dir).
pub fn rank_from_path(path: &Path) -> Option<u32> {
    if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
        let parts: Vec<&str> = name.split('.').collect();
        let ext = parts[parts.len() - 1];
        if parts.len() >= 4
            && (ext.eq_ignore_ascii_case("json") || ext.eq_ignore_ascii_case("pftrace"))
        {
            let pid = parts[parts.len() - 3];
            let rank = parts[parts.len() - 2];
            if is_digits(pid) && is_digits(rank) {
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

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

/// A `--ranks` selection (`--ranks 0 2`, `--ranks 0-3,7`).
#[derive(Debug, Clone)]
pub struct RankSet(Vec<u32>);

impl RankSet {
    pub fn new(ranks: Vec<u32>) -> RankSet {
        RankSet(ranks)
    }

    pub fn parse(spec: &str) -> Result<RankSet> {
        unitrace_core::result_dir::parse_rank_list([spec])
            .map(RankSet)
            .map_err(|e| anyhow::anyhow!("--ranks: {e}"))
    }

    pub fn contains(&self, rank: u32) -> bool {
        self.0.contains(&rank)
    }
}

/// Nanoseconds (`.pftrace` timestamps) as the µs [`Decimal`] the options
/// work in.
pub fn ns_to_us(ns: u64) -> Decimal {
    Decimal::from_parts(i128::from(ns), 3)
}

/// `--time-window A:B` in microseconds since the start of the merged trace.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub from: Option<Decimal>,
    pub to: Option<Decimal>,
}

impl Window {
    pub fn parse(spec: &str) -> Result<Window> {
        let Some((a, b)) = spec.split_once(':') else {
            bail!("--time-window: expected A:B, got '{spec}'");
        };
        let from = parse_duration_us(a.trim())?;
        let to = parse_duration_us(b.trim())?;
        if let (Some(f), Some(t)) = (from, to) {
            if t < f {
                bail!("--time-window: end {b} is before start {a}");
            }
        }
        Ok(Window { from, to })
    }

    /// The same window in absolute trace time, `origin` being the merged
    /// trace's first timestamp.
    pub fn absolute(self, origin: Decimal) -> Window {
        Window {
            from: self.from.and_then(|f| origin.checked_add(f)),
            to: self.to.and_then(|t| origin.checked_add(t)),
        }
    }

    /// Whether `[ts, ts + dur]` overlaps the window.
    pub fn overlaps(&self, ts: Decimal, dur: Option<Decimal>) -> bool {
        let end = dur.and_then(|d| ts.checked_add(d)).unwrap_or(ts);
        self.from.is_none_or(|f| end >= f) && self.to.is_none_or(|t| ts <= t)
    }
}

/// `1.5s`, `250ms`, `10us`, `5ns`, `2` (seconds) in microseconds; empty is
/// unbounded.
fn parse_duration_us(s: &str) -> Result<Option<Decimal>> {
    if s.is_empty() {
        return Ok(None);
    }
    let (num, micro_exp): (&str, i32) = if let Some(n) = s.strip_suffix("ns") {
        (n, -3)
    } else if let Some(n) = s.strip_suffix("us") {
        (n, 0)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 6)
    } else {
        (s, 6)
    };
    let d = Decimal::parse(num.trim().as_bytes())
        .with_context(|| format!("--time-window: bad time '{s}'"))?;
    let us = if micro_exp >= 0 {
        d.shift_decimal_point(micro_exp as u32)
    } else {
        // Nanoseconds: three more decimals, exactly.
        Some(Decimal::from_parts(d.mantissa(), d.scale() + 3))
    };
    us.map(Some)
        .with_context(|| format!("--time-window: time '{s}' out of range"))
}

/// What the first events of a trace say.
#[derive(Debug, Clone, Default)]
pub struct Head {
    /// `ts` of the first event that has one (unitrace: the host
    /// `process_name` event, written at process start, docs/formats.md#trace-json-ids).
    pub first_ts: Option<Decimal>,
    /// `N` of a `RANK N ...` process name (docs/formats.md#trace-json-ids).
    pub rank_label: Option<u32>,
}

/// Reads at most the first 64 events (first MiBs) of `path`. Problems are
/// left for the full pass to report.
pub fn read_head(path: &Path) -> Head {
    let gz_pftrace = || crate::input::inspect(path).is_ok_and(|i| i.pftrace);
    if TraceFormat::of_path(path) == TraceFormat::Pftrace || gz_pftrace() {
        return read_head_pftrace(path);
    }
    let mut head = Head::default();
    let Ok(file) = crate::input::open_stream(path) else {
        return head;
    };
    let mut reader = TraceReader::with_max_event_bytes(file.take(8 << 20), 4 << 20);
    for _ in 0..64 {
        let Ok(Some(ev)) = reader.next_event() else {
            break;
        };
        if head.first_ts.is_none() {
            head.first_ts = ev.decimal(Field::Ts);
        }
        if head.rank_label.is_none()
            && ev.str_raw(Field::Ph) == Some(b"M")
            && ev.str_raw(Field::Name) == Some(b"process_name")
        {
            head.rank_label = process_label(&ev).and_then(|l| rank_in_label(&l));
        }
        if head.first_ts.is_some() && head.rank_label.is_some() {
            break;
        }
    }
    head
}

/// The head of a `.pftrace`: the first packet timestamp (ns, as µs) and
/// the `RANK N` of the first process descriptor, within the first 64
/// packets.
pub fn read_head_pftrace(path: &Path) -> Head {
    let mut head = Head::default();
    let Ok(file) = crate::input::open_stream(path) else {
        return head;
    };
    let mut reader = PacketReader::with_max_packet(file.take(8 << 20), 4 << 20);
    for _ in 0..64 {
        let Ok(Some(rec)) = reader.next_record() else {
            break;
        };
        let Ok(p) = rec.decode() else { break };
        if head.first_ts.is_none() {
            head.first_ts = p.timestamp.map(ns_to_us);
        }
        if let (None, PacketData::TrackDescriptor(d)) = (head.rank_label, p.data) {
            if let Some(name) = d.process.and_then(|_| d.display_name()) {
                head.rank_label = rank_in_label(&name);
            }
        }
        if head.first_ts.is_some() && head.rank_label.is_some() {
            break;
        }
    }
    head
}

/// `args.name` of a metadata event.
pub fn process_label(ev: &unitrace_core::trace::Event<'_>) -> Option<String> {
    let args = ev.value(Field::Args)?;
    if args.first() != Some(&b'{') {
        return None;
    }
    let (_, span) = unitrace_core::trace::object_members(args).find(|(k, _)| *k == b"name")?;
    let v = &args[span.range()];
    if v.len() < 2 || v[0] != b'"' {
        return None;
    }
    let escaped = v.contains(&b'\\');
    unitrace_core::trace::decode_string_content(&v[1..v.len() - 1], escaped).map(|c| c.into_owned())
}

/// The rank a process name carries, as every tool reads it
/// (docs/formats.md#timeline-ranks).
fn rank_in_label(label: &str) -> Option<u32> {
    unitrace_core::timeline::rank::split_rank_label(label).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_from_names() {
        assert_eq!(
            rank_from_path(Path::new("d/python.100001.12.json")),
            Some(12)
        );
        assert_eq!(rank_from_path(Path::new("python.100001.json")), None);
        assert_eq!(
            rank_from_path(Path::new("res/rank_3.python.4242/chrome_trace.json")),
            Some(3)
        );
        assert_eq!(rank_from_path(Path::new("all.json")), None);
    }

    #[test]
    fn rank_lists() {
        let r = RankSet::parse("0-3,7").unwrap();
        assert!(r.contains(0) && r.contains(3) && r.contains(7));
        assert_eq!(
            rank_from_path(Path::new("d/python.100001.12.pftrace")),
            Some(12)
        );
        assert!(!r.contains(4) && !r.contains(8));
        assert!(RankSet::parse("3-1").is_err());
        assert!(RankSet::parse("x").is_err());
        assert!(RankSet::parse("").is_err());
    }

    #[test]
    fn windows() {
        let w = Window::parse("1.5s:250000ms").unwrap();
        assert_eq!(w.from.unwrap().to_string(), "1500000");
        assert_eq!(w.to.unwrap().to_string(), "250000000");
        let w = Window::parse(":10us").unwrap();
        assert!(w.from.is_none());
        let w = Window::parse("1500ns:2").unwrap();
        assert_eq!(w.from.unwrap().to_string(), "1.500");
        assert!(Window::parse("5").is_err());
        assert!(Window::parse("3s:1s").is_err());
        let abs = Window::parse("1us:2us")
            .unwrap()
            .absolute(Decimal::parse(b"100.000000").unwrap());
        let d = |s: &str| Decimal::parse(s.as_bytes()).unwrap();
        assert!(abs.overlaps(d("100.5"), Some(d("1"))));
        assert!(!abs.overlaps(d("102.5"), None));
        assert!(!abs.overlaps(d("98"), Some(d("0.5"))));
    }
}
