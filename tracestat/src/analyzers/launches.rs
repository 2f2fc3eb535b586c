//! Kernel launches (docs/tracestat.md#launches-launches): per rank and
//! device, how many device operations were matched to the host call that
//! submitted them, the launch latency (operation start - submitting call
//! start) as mergeable percentiles, and the short operations (under
//! `--short-kernel`) that launch overhead dominates.

use serde::{Deserialize, Serialize};
use unitrace_render::sections::{Column, Section, Table, Unit, Value};

use super::breakdown::limit_rows;
use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::ingest::KernelRun;
use crate::rank_model::RankModel;
use crate::sketch::DurationSketch;
use crate::time::{pct, us, Ns};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchStats {
    pub kernels: u64,
    pub kernel_ns: Ns,
    /// Kernels whose submission (H2D flow start) was found.
    pub with_flow: u64,
    pub latency: DurationSketch,
    pub latency_sum_ns: Ns,
    /// Kernels that start before their submission (clocks apart).
    pub negative_latency: u64,
    pub short_count: u64,
    pub short_ns: Ns,
}

impl LaunchStats {
    fn add(&mut self, l: &LaunchStats) {
        self.kernels += l.kernels;
        self.kernel_ns += l.kernel_ns;
        self.with_flow += l.with_flow;
        self.latency.merge(&l.latency);
        self.latency_sum_ns += l.latency_sum_ns;
        self.negative_latency += l.negative_latency;
        self.short_count += l.short_count;
        self.short_ns += l.short_ns;
    }
}

/// One rank's launches: the rank, then each device when it has several.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankLaunches {
    pub all: LaunchStats,
    pub devices: Vec<(String, LaunchStats)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LaunchRow {
    pub rank: String,
    /// `all` for the rank (or all ranks), else the device label.
    pub device: String,
    pub kernels: u64,
    pub with_flow: u64,
    pub latency_mean_us: f64,
    pub latency_p50_us: f64,
    pub latency_p95_us: f64,
    pub latency_max_us: f64,
    pub negative_latency: u64,
    pub short_kernels: u64,
    pub short_launch_pct: f64,
    pub short_time_us: f64,
    pub short_time_pct: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LaunchesOut {
    pub launches: Vec<LaunchRow>,
}

pub struct Launches;

impl Analyzer for Launches {
    type Rank = RankLaunches;
    type Output = LaunchesOut;

    fn observe(m: &RankModel<'_>, o: &RankOptions) -> Self::Rank {
        let launched = || m.trace.kernels.iter().zip(&m.submissions);
        let devices = if m.trace.devices.len() > 1 {
            m.trace
                .devices
                .iter()
                .enumerate()
                .map(|(d, dev)| {
                    let mine = launched().filter(|(k, _)| k.device as usize == d);
                    (dev.label.clone(), launch_stats(mine, o.short_kernel_ns))
                })
                .collect()
        } else {
            Vec::new()
        };
        RankLaunches {
            all: launch_stats(launched(), o.short_kernel_ns),
            devices,
        }
    }

    fn part(rank: &RankSummary) -> &Self::Rank {
        &rank.parts.launches
    }

    fn finish(ranks: &Ranks<'_>, _: &Finished) -> LaunchesOut {
        let mut launches = Vec::new();
        let mut all = LaunchStats::default();
        for (r, label) in ranks.ranks.iter().zip(&ranks.labels) {
            let part = Self::part(r);
            launches.push(row(label, "all", &part.all));
            for (device, l) in &part.devices {
                launches.push(row(label, device, l));
            }
            all.add(&part.all);
        }
        if ranks.ranks.len() > 1 {
            launches.push(row("all", "all", &all));
        }
        LaunchesOut { launches }
    }

    fn sections(r: &Report, screen: &Screen) -> Vec<Section> {
        let rows = &r.out.launches.launches;
        let shown: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].rank == "all" || screen.ranks.contains(&rows[i].rank))
            .collect();
        let mut s = Section::new(
            "launches",
            "Kernel launches (latency = kernel start - submitting call start)",
        );
        let mut t = table(rows);
        limit_rows(&mut t, &shown, screen);
        t.notes.push(format!(
            "(short: kernels under {})",
            crate::time::duration_text(r.options.short_kernel_ns)
        ));
        s.tables.push(t);
        vec![s]
    }
}

fn row(label: &str, device: &str, l: &LaunchStats) -> LaunchRow {
    LaunchRow {
        rank: label.to_string(),
        device: device.to_string(),
        kernels: l.kernels,
        with_flow: l.with_flow,
        latency_mean_us: if l.latency.count > 0 {
            us(l.latency_sum_ns) / l.latency.count as f64
        } else {
            0.0
        },
        latency_p50_us: l.latency.quantile(0.5) / 1e3,
        latency_p95_us: l.latency.quantile(0.95) / 1e3,
        latency_max_us: us(l.latency.max),
        negative_latency: l.negative_latency,
        short_kernels: l.short_count,
        short_launch_pct: pct(l.short_count as f64, l.kernels as f64),
        short_time_us: us(l.short_ns),
        short_time_pct: pct(l.short_ns as f64, l.kernel_ns as f64),
    }
}

fn table(rows: &[LaunchRow]) -> Table {
    let mut t = Table::new(
        "launches",
        "",
        vec![
            Column::new("rank", "rank", Unit::Text),
            Column::new("device", "device", Unit::Text).files_only(),
            Column::new("kernels", "kernels", Unit::Count),
            Column::new("with_flow", "matched", Unit::Count),
            Column::new("latency_mean_us", "mean", Unit::Us),
            Column::new("latency_p50_us", "p50", Unit::Us),
            Column::new("latency_p95_us", "p95", Unit::Us),
            Column::new("latency_max_us", "max", Unit::Us),
            Column::new("negative_latency", "negative", Unit::Count).files_only(),
            Column::new("short_kernels", "short", Unit::Count),
            Column::new("short_launch_pct", "short", Unit::Pct),
            Column::new("short_time_us", "short time", Unit::Us).files_only(),
            Column::new("short_time_pct", "short time", Unit::Pct),
            Column::new("device", "device", Unit::Text).screen_only(),
        ],
    );
    for l in rows {
        t.push(vec![
            Value::from(&l.rank),
            Value::from(&l.device),
            l.kernels.into(),
            l.with_flow.into(),
            l.latency_mean_us.into(),
            l.latency_p50_us.into(),
            l.latency_p95_us.into(),
            l.latency_max_us.into(),
            l.negative_latency.into(),
            l.short_kernels.into(),
            l.short_launch_pct.into(),
            l.short_time_us.into(),
            l.short_time_pct.into(),
            Value::from(&l.device),
        ]);
    }
    t
}

/// Launch latency and short kernels of some kernels and their submissions.
fn launch_stats<'k>(
    kernels: impl Iterator<Item = (&'k KernelRun, &'k Option<(u64, Ns)>)>,
    short_kernel_ns: Ns,
) -> LaunchStats {
    let mut launches = LaunchStats::default();
    let mut latencies: Vec<Ns> = Vec::new();
    for (k, sub) in kernels {
        let d = k.end - k.start;
        launches.kernels += 1;
        launches.kernel_ns += d;
        if d < short_kernel_ns {
            launches.short_count += 1;
            launches.short_ns += d;
        }
        if let Some((_, ts)) = *sub {
            launches.with_flow += 1;
            let lat = k.start - ts;
            if lat < 0 {
                launches.negative_latency += 1;
            } else {
                launches.latency_sum_ns += lat;
                latencies.push(lat);
            }
        }
    }
    launches.latency = DurationSketch::from_values(&mut latencies);
    launches
}
