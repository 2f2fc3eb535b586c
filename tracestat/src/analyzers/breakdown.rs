//! Where the time went, per rank and device (docs/tracestat.md#breakdown):
//! wall time, device busy time (the union of device operations), the
//! exclusive compute, communication and memory time (a moment counts once:
//! compute > communication > memory), idle time; and how much of the
//! communication ran under compute (docs/tracestat.md#overlap).

use serde::{Deserialize, Serialize};
use unitrace_render::sections::{Column, Section, Table, Unit, Value};

use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::rank_model::RankModel;
use crate::time::{pct, us, Ns};

/// One scope (the rank, or one of its devices) of one rank.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScopeTimes {
    /// `all` for the whole rank, else the device label.
    pub device: String,
    pub wall_ns: Ns,
    pub busy_ns: Ns,
    pub compute_ns: Ns,
    pub communication_ns: Ns,
    pub memory_ns: Ns,
    pub idle_ns: Ns,
    /// Union of communication operations, whatever else runs.
    pub communication_union_ns: Ns,
    /// Time where communication and compute run together.
    pub overlap_ns: Ns,
    /// Sum of operation durations (not a union).
    pub kernel_sum_ns: Ns,
    pub launches: u64,
    /// The active window: first device operation's start to the last one's
    /// end (0 without device work).
    pub active_ns: Ns,
    /// Idle before the first device operation (since the rank's first
    /// event) and after the last one (to its last event).
    pub idle_before_ns: Ns,
    pub idle_after_ns: Ns,
}

#[derive(Debug, Clone, Serialize)]
pub struct BreakdownRow {
    pub rank: String,
    pub device: String,
    pub file: String,
    pub wall_us: f64,
    pub busy_us: f64,
    pub busy_pct: f64,
    pub compute_us: f64,
    pub communication_us: f64,
    pub memory_us: f64,
    pub idle_us: f64,
    pub compute_pct: f64,
    pub communication_pct: f64,
    pub memory_pct: f64,
    pub idle_pct: f64,
    pub communication_total_us: f64,
    pub overlap_us: f64,
    pub overlap_pct: f64,
    pub exposed_communication_us: f64,
    pub kernel_time_us: f64,
    pub launches: u64,
    /// The active window (first to last device operation) and the idle
    /// time before it, inside it and after it (docs/tracestat.md#breakdown).
    pub active_us: f64,
    pub idle_before_us: f64,
    pub idle_between_us: f64,
    pub idle_after_us: f64,
    /// Shares of the active window: the headline numbers.
    pub busy_active_pct: f64,
    pub compute_active_pct: f64,
    pub communication_active_pct: f64,
    pub memory_active_pct: f64,
    pub idle_active_pct: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct BreakdownOut {
    pub breakdown: Vec<BreakdownRow>,
}

pub struct Breakdown;

impl Analyzer for Breakdown {
    /// `[0]` the whole rank; then one per device when it has several.
    type Rank = Vec<ScopeTimes>;
    type Output = BreakdownOut;

    fn observe(m: &RankModel<'_>, _: &RankOptions) -> Self::Rank {
        m.scopes
            .iter()
            .map(|s| {
                let busy = s.sweep.busy();
                let (first, last) = match (s.sweep.segments.first(), s.sweep.segments.last()) {
                    (Some(a), Some(b)) => (a.0, b.1),
                    _ => (m.first, m.first),
                };
                let active = last - first;
                ScopeTimes {
                    device: s.device.clone(),
                    wall_ns: m.wall,
                    busy_ns: busy,
                    compute_ns: s.sweep.class_ns[0],
                    communication_ns: s.sweep.class_ns[1],
                    memory_ns: s.sweep.class_ns[2],
                    idle_ns: m.wall - busy,
                    communication_union_ns: s.sweep.comm_union,
                    overlap_ns: s.sweep.overlap,
                    kernel_sum_ns: s.kernel_sum,
                    launches: s.launches,
                    active_ns: active,
                    idle_before_ns: if active > 0 {
                        (first - m.first).max(0)
                    } else {
                        m.wall
                    },
                    idle_after_ns: if active > 0 {
                        (m.last - last).max(0)
                    } else {
                        0
                    },
                }
            })
            .collect()
    }

    fn part(rank: &RankSummary) -> &Self::Rank {
        &rank.parts.breakdown
    }

    fn finish(ranks: &Ranks<'_>, _: &Finished) -> BreakdownOut {
        let mut breakdown = Vec::new();
        for (r, label) in ranks.ranks.iter().zip(&ranks.labels) {
            for s in Self::part(r) {
                breakdown.push(row(label, &r.file, s));
            }
        }
        BreakdownOut { breakdown }
    }

    fn sections(r: &Report, screen: &Screen) -> Vec<Section> {
        let rows = &r.out.breakdown.breakdown;
        let shown: Vec<usize> = (0..rows.len())
            .filter(|&i| screen.ranks.contains(&rows[i].rank))
            .collect();
        let mut s = Section::new(
            "breakdown",
            "Where the time went (share of each rank's active window, its first to last device operation; a moment counts once: compute > communication > memory > idle)",
        );
        s.tables.push(breakdown_table(rows, &shown, screen));
        let mut o = Section::new("overlap", "Communication overlapped by compute");
        o.tables.push(overlap_table(rows, &shown, screen));
        vec![s, o]
    }
}

fn row(label: &str, file: &str, s: &ScopeTimes) -> BreakdownRow {
    let wall = us(s.wall_ns);
    BreakdownRow {
        rank: label.to_string(),
        device: s.device.clone(),
        file: file.to_string(),
        wall_us: wall,
        busy_us: us(s.busy_ns),
        busy_pct: pct(us(s.busy_ns), wall),
        compute_us: us(s.compute_ns),
        communication_us: us(s.communication_ns),
        memory_us: us(s.memory_ns),
        idle_us: us(s.idle_ns),
        compute_pct: pct(us(s.compute_ns), wall),
        communication_pct: pct(us(s.communication_ns), wall),
        memory_pct: pct(us(s.memory_ns), wall),
        idle_pct: if s.wall_ns > 0 {
            pct(us(s.idle_ns), wall)
        } else {
            0.0
        },
        communication_total_us: us(s.communication_union_ns),
        overlap_us: us(s.overlap_ns),
        overlap_pct: pct(us(s.overlap_ns), us(s.communication_union_ns)),
        exposed_communication_us: us(s.communication_union_ns - s.overlap_ns),
        kernel_time_us: us(s.kernel_sum_ns),
        launches: s.launches,
        active_us: us(s.active_ns),
        idle_before_us: us(s.idle_before_ns),
        idle_between_us: us(s.active_ns - s.busy_ns),
        idle_after_us: us(s.idle_after_ns),
        busy_active_pct: pct(us(s.busy_ns), us(s.active_ns)),
        compute_active_pct: pct(us(s.compute_ns), us(s.active_ns)),
        communication_active_pct: pct(us(s.communication_ns), us(s.active_ns)),
        memory_active_pct: pct(us(s.memory_ns), us(s.active_ns)),
        idle_active_pct: pct(us(s.active_ns - s.busy_ns), us(s.active_ns)),
    }
}

/// The rows a per-rank table shows, and the line saying what it leaves out.
pub fn limit_rows(t: &mut Table, shown: &[usize], screen: &Screen) {
    if screen.ranks.is_capped() {
        t.show_only(
            shown.to_vec(),
            format!(
                "({} more ranks not shown: --rank-rows all)",
                screen.ranks.left_out()
            ),
        );
    }
}

fn breakdown_table(rows: &[BreakdownRow], shown: &[usize], screen: &Screen) -> Table {
    let mut t = Table::new(
        "breakdown",
        "",
        vec![
            Column::new("rank", "rank", Unit::Text),
            Column::new("device", "device", Unit::Text).files_only(),
            Column::new("file", "file", Unit::Text).files_only(),
            Column::new("wall_us", "wall", Unit::Us).files_only(),
            Column::new("busy_us", "busy", Unit::Us).files_only(),
            Column::new("busy_pct", "busy of wall", Unit::Pct).files_only(),
            Column::new("compute_us", "compute", Unit::Us).files_only(),
            Column::new("communication_us", "communication", Unit::Us).files_only(),
            Column::new("memory_us", "memory", Unit::Us).files_only(),
            Column::new("idle_us", "idle", Unit::Us).files_only(),
            Column::new("compute_pct", "compute of wall", Unit::Pct).files_only(),
            Column::new("communication_pct", "comm of wall", Unit::Pct).files_only(),
            Column::new("memory_pct", "memory of wall", Unit::Pct).files_only(),
            Column::new("idle_pct", "idle of wall", Unit::Pct).files_only(),
            Column::new("kernel_time_us", "kernel time", Unit::Us).files_only(),
            Column::new("launches", "launches", Unit::Count).files_only(),
            Column::new("active_us", "active", Unit::Us),
            Column::new("busy_active_pct", "busy", Unit::Pct),
            Column::new("compute_active_pct", "compute", Unit::Pct),
            Column::new("communication_active_pct", "comm", Unit::Pct),
            Column::new("memory_active_pct", "memory", Unit::Pct),
            Column::new("idle_active_pct", "idle", Unit::Pct),
            Column::new("idle_before_us", "idle before", Unit::Us),
            Column::new("idle_between_us", "idle between", Unit::Us).files_only(),
            Column::new("idle_after_us", "idle after", Unit::Us),
            Column::new("wall_us", "wall", Unit::Us).screen_only(),
            Column::new("device", "device", Unit::Text).screen_only(),
        ],
    );
    for b in rows {
        t.push(vec![
            Value::from(&b.rank),
            Value::from(&b.device),
            Value::from(&b.file),
            b.wall_us.into(),
            b.busy_us.into(),
            b.busy_pct.into(),
            b.compute_us.into(),
            b.communication_us.into(),
            b.memory_us.into(),
            b.idle_us.into(),
            b.compute_pct.into(),
            b.communication_pct.into(),
            b.memory_pct.into(),
            b.idle_pct.into(),
            b.kernel_time_us.into(),
            b.launches.into(),
            b.active_us.into(),
            b.busy_active_pct.into(),
            b.compute_active_pct.into(),
            b.communication_active_pct.into(),
            b.memory_active_pct.into(),
            b.idle_active_pct.into(),
            b.idle_before_us.into(),
            b.idle_between_us.into(),
            b.idle_after_us.into(),
            b.wall_us.into(),
            Value::from(&b.device),
        ]);
    }
    limit_rows(&mut t, shown, screen);
    t.notes.push("(wall: the rank's first to last event; idle before/after: outside the active window, often start-up and shutdown; the same shares of the whole wall time are in --csv/--json)".to_string());
    t
}

fn overlap_table(rows: &[BreakdownRow], shown: &[usize], screen: &Screen) -> Table {
    let mut t = Table::new(
        "overlap",
        "",
        vec![
            Column::new("rank", "rank", Unit::Text),
            Column::new("device", "device", Unit::Text).files_only(),
            Column::new("communication_us", "comm", Unit::Us),
            Column::new("overlap_us", "overlap", Unit::Us),
            Column::new("overlap_pct", "overlap", Unit::Pct),
            Column::new("exposed_communication_us", "exposed", Unit::Us),
            Column::new("device", "device", Unit::Text).screen_only(),
        ],
    );
    for b in rows {
        t.push(vec![
            Value::from(&b.rank),
            Value::from(&b.device),
            b.communication_total_us.into(),
            b.overlap_us.into(),
            b.overlap_pct.into(),
            b.exposed_communication_us.into(),
            Value::from(&b.device),
        ]);
    }
    limit_rows(&mut t, shown, screen);
    t
}
