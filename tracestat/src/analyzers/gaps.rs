//! Device idle gaps and what the host was doing meanwhile
//! (docs/tracestat.md#gap-causes): per rank and device, the gaps between
//! busy stretches, a histogram of their lengths, and the time of each gap
//! attributed, moment by moment, to the host activity of highest
//! precedence (a collective call > a synchronisation > other host work >
//! unknown).

use serde::{Deserialize, Serialize};
use unitrace_render::sections::{Column, Section, Table, Unit, Value};

use super::breakdown::limit_rows;
use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::classify::HostKind;
use crate::rank_model::RankModel;
use crate::time::{us, Ns};

/// Upper bounds of the idle-gap histogram buckets (the last is open).
pub const GAP_BUCKETS_NS: [Ns; 4] = [10_000, 100_000, 1_000_000, 10_000_000];
pub const GAP_BUCKET_LABELS: [&str; 5] = ["<10us", "10us-100us", "100us-1ms", "1ms-10ms", ">=10ms"];

/// Gap causes in report order (precedence order, then unknown).
pub const CAUSES: [&str; 4] = ["collective", "sync", "host_busy", "unknown"];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GapStats {
    /// `all` for the whole rank, else the device label.
    pub device: String,
    pub count: u64,
    pub total_ns: Ns,
    pub longest_ns: Ns,
    /// Count per [`GAP_BUCKET_LABELS`] bucket.
    pub hist_count: [u64; 5],
    /// Time per bucket.
    pub hist_ns: [Ns; 5],
    /// Gaps whose main cause is each of [`CAUSES`].
    pub cause_count: [u64; 4],
    /// Gap time attributed to each cause, time point by time point.
    pub cause_ns: [Ns; 4],
    /// Gaps under [`LAUNCH_GAP_NS`] while the host was busy (or untraced)
    /// and in no synchronisation: the device outran the launches
    /// (docs/findings.md#launch-bound).
    #[serde(default)]
    pub launch_gaps: GapTally,
    /// Gaps of [`LAUNCH_GAP_NS`] or more whose main cause is other host
    /// work (or none traced) (docs/findings.md#host-bound).
    #[serde(default)]
    pub host_gaps: GapTally,
    /// Gaps with the host in a synchronisation call during them: those
    /// under [`LAUNCH_GAP_NS`] whose main cause is not a collective, and
    /// longer ones whose main cause is the synchronisation
    /// (docs/findings.md#sync-wait).
    #[serde(default)]
    pub sync_gaps: GapTally,
    /// The host ranges of the host-bound gaps ([`range_names`]): name and
    /// gap time, the [`TOP_RANGES`] with the most time.
    #[serde(default)]
    pub host_gap_ranges: Vec<(String, Ns)>,
}

/// Gaps shorter than this are the cadence of launches; longer ones are
/// host work (docs/findings.md#launch-bound).
pub const LAUNCH_GAP_NS: Ns = 100_000;

/// Host ranges named per rank for its host-bound gaps.
pub const TOP_RANGES: usize = 3;

/// Some gaps: how many, their time, and the longest one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GapTally {
    pub count: u64,
    pub ns: Ns,
    pub longest_start_ns: Ns,
    pub longest_ns: Ns,
}

impl GapTally {
    fn add(&mut self, start: Ns, len: Ns) {
        self.count += 1;
        self.ns += len;
        if len > self.longest_ns {
            self.longest_ns = len;
            self.longest_start_ns = start;
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct GapRow {
    pub rank: String,
    pub device: String,
    pub count: u64,
    pub total_us: f64,
    pub longest_us: f64,
    pub mean_us: f64,
    /// `(bucket label, count, time)`.
    pub histogram: Vec<(String, u64, f64)>,
    /// `(cause, gaps whose main cause it is, time attributed)`.
    pub causes: Vec<(String, u64, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GapsOut {
    pub idle_gaps: Vec<GapRow>,
}

pub struct Gaps;

impl Analyzer for Gaps {
    type Rank = Vec<GapStats>;
    type Output = GapsOut;

    fn observe(m: &RankModel<'_>, _: &RankOptions) -> Self::Rank {
        m.scopes
            .iter()
            .map(|s| {
                let (mut g, host_gaps) = gaps(&s.sweep.segments, &m.host_segments);
                g.device = s.device.clone();
                g.host_gap_ranges = range_names(m, &host_gaps);
                g
            })
            .collect()
    }

    fn part(rank: &RankSummary) -> &Self::Rank {
        &rank.parts.gaps
    }

    fn finish(ranks: &Ranks<'_>, _: &Finished) -> GapsOut {
        let mut idle_gaps = Vec::new();
        for (r, label) in ranks.ranks.iter().zip(&ranks.labels) {
            for g in Self::part(r) {
                idle_gaps.push(row(label, g));
            }
        }
        GapsOut { idle_gaps }
    }

    fn sections(r: &Report, screen: &Screen) -> Vec<Section> {
        let rows = &r.out.gaps.idle_gaps;
        let shown: Vec<usize> = (0..rows.len())
            .filter(|&i| screen.ranks.contains(&rows[i].rank))
            .collect();
        let mut s = Section::new(
            "idle-gaps",
            "GPU idle gaps and what the host was doing meanwhile (time per cause)",
        );
        s.tables.push(table(rows, &shown, screen));
        vec![s]
    }
}

fn row(label: &str, g: &GapStats) -> GapRow {
    GapRow {
        rank: label.to_string(),
        device: g.device.clone(),
        count: g.count,
        total_us: us(g.total_ns),
        longest_us: us(g.longest_ns),
        mean_us: if g.count > 0 {
            us(g.total_ns) / g.count as f64
        } else {
            0.0
        },
        histogram: (0..5)
            .map(|i| {
                (
                    GAP_BUCKET_LABELS[i].to_string(),
                    g.hist_count[i],
                    us(g.hist_ns[i]),
                )
            })
            .collect(),
        causes: (0..4)
            .map(|i| (CAUSES[i].to_string(), g.cause_count[i], us(g.cause_ns[i])))
            .collect(),
    }
}

fn table(rows: &[GapRow], shown: &[usize], screen: &Screen) -> Table {
    let mut columns = vec![
        Column::new("rank", "rank", Unit::Text),
        Column::new("device", "device", Unit::Text).files_only(),
        Column::new("gaps", "gaps", Unit::Count),
        Column::new("total_us", "total", Unit::Us),
        Column::new("longest_us", "longest", Unit::Us),
        Column::new("mean_us", "mean", Unit::Us).files_only(),
    ];
    for label in GAP_BUCKET_LABELS {
        columns.push(Column::new(format!("count_{label}"), label, Unit::Count));
        columns.push(Column::new(format!("us_{label}"), label, Unit::Us).files_only());
    }
    for cause in CAUSES {
        columns.push(Column::new(format!("{cause}_gaps"), cause, Unit::Count).files_only());
        columns.push(Column::new(format!("{cause}_us"), cause, Unit::Us));
    }
    columns.push(Column::new("device", "device", Unit::Text).screen_only());
    let mut t = Table::new("idle_gaps", "", columns);
    for g in rows {
        let mut row: Vec<Value> = vec![
            Value::from(&g.rank),
            Value::from(&g.device),
            g.count.into(),
            g.total_us.into(),
            g.longest_us.into(),
            g.mean_us.into(),
        ];
        for (_, n, time) in g.histogram.iter().chain(&g.causes) {
            row.push((*n).into());
            row.push((*time).into());
        }
        row.push(Value::from(&g.device));
        t.push(row);
    }
    limit_rows(&mut t, shown, screen);
    t.notes.push("(gap lengths: the count per bucket; time per cause: every moment of a gap goes to the host activity of highest precedence)".to_string());
    t
}

/// Idle gaps between busy segments, with their causes; and the host-bound
/// gaps, for naming.
fn gaps(segments: &[(Ns, Ns)], host: &[(Ns, Ns, HostKind)]) -> (GapStats, Vec<(Ns, Ns)>) {
    let mut g = GapStats::default();
    let mut host_bound = Vec::new();
    let mut h = 0;
    for w in segments.windows(2) {
        let (a, b) = (w[0].1, w[1].0);
        if b <= a {
            continue;
        }
        let len = b - a;
        g.count += 1;
        g.total_ns += len;
        g.longest_ns = g.longest_ns.max(len);
        let bucket = GAP_BUCKETS_NS.iter().position(|&u| len < u).unwrap_or(4);
        g.hist_count[bucket] += 1;
        g.hist_ns[bucket] += len;
        // Host segments are sorted and disjoint, gaps too: one forward walk.
        while h < host.len() && host[h].1 <= a {
            h += 1;
        }
        let mut by = [0 as Ns; 4];
        let mut k = h;
        while k < host.len() && host[k].0 < b {
            let (s, e, kind) = host[k];
            let ov = e.min(b) - s.max(a);
            if ov > 0 {
                by[kind as usize] += ov;
            }
            k += 1;
        }
        by[3] = len - by[0] - by[1] - by[2];
        // Main cause: the largest share; ties go to the earlier cause.
        let mut main = 0;
        for i in 1..4 {
            if by[i] > by[main] {
                main = i;
            }
        }
        g.cause_count[main] += 1;
        for (total, part) in g.cause_ns.iter_mut().zip(by) {
            *total += part;
        }
        // Causes: 0 collective, 1 sync, 2 host busy, 3 unknown.
        // A short gap the host spent partly in a synchronisation is the
        // sync's cost (the device drained while the host waited, then it
        // refilled the queue); a long one is the sync's only when the sync
        // is its main cause (docs/findings.md#sync-wait).
        if by[1] > 0 && main != 0 && (main == 1 || len < LAUNCH_GAP_NS) {
            g.sync_gaps.add(a, len);
        } else if main >= 2 {
            if len < LAUNCH_GAP_NS {
                g.launch_gaps.add(a, len);
            } else {
                g.host_gaps.add(a, len);
                host_bound.push((a, b));
            }
        }
    }
    (g, host_bound)
}

/// The host ranges the host-bound gaps fell in: every moment of a gap
/// goes to the innermost (shortest) host range of any thread around it,
/// `(no range)` where none is; the [`TOP_RANGES`] names with the most gap
/// time.
fn range_names(m: &RankModel<'_>, host_gaps: &[(Ns, Ns)]) -> Vec<(String, Ns)> {
    if host_gaps.is_empty() {
        return Vec::new();
    }
    // Whether a name is a step's, once per name rather than once per host
    // event (a trace has far fewer names than calls).
    let mut step_name: Vec<Option<bool>> = Vec::new();
    let mut is_step = |id: unitrace_core::timeline::NameId| {
        let i = id.index();
        if step_name.len() <= i {
            step_name.resize(i + 1, None);
        }
        *step_name[i].get_or_insert_with(|| crate::rank_model::is_step_range(m.name(id)))
    };
    let mut ranges: Vec<(Ns, Ns, unitrace_core::timeline::NameId)> = m
        .trace
        .host
        .iter()
        // Only the ranges that overlap a gap count (`start < b`, `end > a`):
        // the first gap ending after the start decides (the gaps are sorted
        // and disjoint), and far fewer ranges are left to sort.
        .filter(|h| {
            let i = host_gaps.partition_point(|g| g.1 <= h.start);
            host_gaps.get(i).is_some_and(|g| g.0 < h.end)
        })
        .filter(|h| !is_step(h.name))
        .map(|h| (h.start, h.end, h.name))
        .collect();
    ranges.sort_unstable_by_key(|r| (r.0, r.1));
    // Gap time by name id (`None`: outside every range), named at the end.
    let mut by_id: rustc_hash::FxHashMap<Option<unitrace_core::timeline::NameId>, Ns> =
        Default::default();
    let mut active: Vec<(Ns, Ns, unitrace_core::timeline::NameId)> = Vec::new();
    let mut next = 0;
    // One buffer of each for every gap.
    let mut here: Vec<(Ns, Ns, unitrace_core::timeline::NameId)> = Vec::new();
    let mut cuts: Vec<Ns> = Vec::new();
    // Gaps are sorted and disjoint: one forward sweep.
    for &(a, b) in host_gaps {
        while next < ranges.len() && ranges[next].0 < b {
            active.push(ranges[next]);
            next += 1;
        }
        active.retain(|r| r.1 > a);
        here.clear();
        here.extend(active.iter().filter(|r| r.0 < b).copied());
        cuts.clear();
        cuts.extend([a, b]);
        for r in &here {
            cuts.extend([r.0.max(a), r.1.min(b)]);
        }
        cuts.sort_unstable();
        cuts.dedup();
        for w in cuts.windows(2) {
            let (s, e) = (w[0], w[1]);
            let inner = here
                .iter()
                .filter(|r| r.0 <= s && r.1 >= e)
                .min_by_key(|r| (r.1 - r.0, r.2));
            *by_id.entry(inner.map(|r| r.2)).or_default() += e - s;
        }
    }
    let mut time: std::collections::BTreeMap<&str, Ns> = Default::default();
    for (id, t) in by_id {
        *time
            .entry(id.map_or(NO_RANGE, |id| m.name(id)))
            .or_default() += t;
    }
    let mut named: Vec<(String, Ns)> = time.into_iter().map(|(n, t)| (n.to_string(), t)).collect();
    named.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    named.truncate(TOP_RANGES);
    named
}

/// The name of host-bound gap time outside every host range.
pub const NO_RANGE: &str = "(no range)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_causes_by_time_share() {
        let host = vec![(100, 130, HostKind::Sync), (130, 200, HostKind::Busy)];
        // Gap 100..200: 30 sync, 70 busy -> busy. Gap 300..400: unknown.
        let (g, host_bound) = gaps(&[(0, 100), (200, 300), (400, 500)], &host);
        // The first gap holds a sync call: a sync gap; the second, short
        // and untraced, the cadence of launches.
        assert!(host_bound.is_empty());
        assert_eq!((g.sync_gaps.count, g.sync_gaps.ns), (1, 100));
        assert_eq!((g.launch_gaps.count, g.launch_gaps.ns), (1, 100));
        assert_eq!(g.host_gaps, GapTally::default());
        assert_eq!(g.count, 2);
        assert_eq!(g.total_ns, 200);
        assert_eq!(g.cause_count, [0, 0, 1, 1]);
        assert_eq!(g.cause_ns, [0, 30, 70, 100]);
        assert_eq!(g.hist_count, [2, 0, 0, 0, 0]);
        // A gap of 150 us with the host busy throughout is host-bound.
        let host = vec![(1_000, 200_000, HostKind::Busy)];
        let (g, host_bound) = gaps(&[(0, 10_000), (160_000, 170_000)], &host);
        assert_eq!(host_bound, vec![(10_000, 160_000)]);
        assert_eq!(
            g.host_gaps,
            GapTally {
                count: 1,
                ns: 150_000,
                longest_start_ns: 10_000,
                longest_ns: 150_000
            }
        );
    }
}
