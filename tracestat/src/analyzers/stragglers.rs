//! Stragglers (docs/tracestat.md#stragglers): per rank its device time,
//! compute and communication against the median rank, how often it
//! arrived last at a matched collective and the wait that caused the
//! others; and the one rank the report names, with why.

use serde::Serialize;
use unitrace_render::sections::{Column, Section, Table, Unit, Value};

use super::breakdown::limit_rows;
use super::{median, vs, Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::rank_model::RankModel;
use crate::time::{pct, us};

#[derive(Debug, Clone, Serialize)]
pub struct StragglerRow {
    pub rank: String,
    pub gpu_time_us: f64,
    pub vs_median_pct: f64,
    pub compute_us: f64,
    pub compute_vs_median_pct: f64,
    pub communication_us: f64,
    pub busy_pct: f64,
    pub arrived_last: u64,
    pub collectives: u64,
    pub wait_caused_us: f64,
    pub own_wait_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Straggler {
    pub rank: String,
    pub reason: String,
    /// mergetrace --stats' line: GPU time against the median.
    pub median_comparison: String,
    /// Named by its arrivals at collectives (else by compute time).
    #[serde(skip)]
    pub by_arrivals: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct StragglersOut {
    pub stragglers: Vec<StragglerRow>,
    /// `null` when no rank stands out (docs/tracestat.md#stragglers).
    pub straggler: Option<Straggler>,
    /// Why there is no straggler (one rank, or none stands out).
    pub no_straggler: Option<String>,
    /// The median comparison of the rank with the most GPU time.
    pub median_comparison: String,
    /// Without a straggler: the ranks (at most 3, the most first) whose
    /// arrivals each made the others wait notably, none twice as long as
    /// the rest (docs/tracestat.md#stragglers); the findings look at each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub late_ranks: Vec<String>,
}

pub struct Stragglers;

impl Analyzer for Stragglers {
    /// Nothing of its own: it reads the breakdown and the collectives.
    type Rank = ();
    type Output = StragglersOut;

    fn observe(_: &RankModel<'_>, _: &RankOptions) {}

    fn part(_: &RankSummary) -> &Self::Rank {
        &()
    }

    fn finish(ranks: &Ranks<'_>, done: &Finished) -> StragglersOut {
        let coll = done
            .collectives
            .as_ref()
            .expect("the collectives finish before the stragglers");
        let scope0 = |r: &RankSummary| r.parts.breakdown.first().cloned().unwrap_or_default();
        let gpu: Vec<f64> = ranks
            .ranks
            .iter()
            .map(|r| us(scope0(r).kernel_sum_ns))
            .collect();
        let med = median(&mut gpu.clone());
        let compute: Vec<f64> = ranks
            .ranks
            .iter()
            .map(|r| us(scope0(r).compute_ns))
            .collect();
        let compute_med = median(&mut compute.clone());
        let t = &coll.tally;
        let stragglers: Vec<StragglerRow> = ranks
            .ranks
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let s = scope0(r);
                StragglerRow {
                    rank: ranks.labels[i].clone(),
                    gpu_time_us: gpu[i],
                    vs_median_pct: vs(gpu[i], med),
                    compute_us: compute[i],
                    compute_vs_median_pct: vs(compute[i], compute_med),
                    communication_us: us(s.communication_ns),
                    busy_pct: pct(s.busy_ns as f64, s.wall_ns as f64),
                    arrived_last: t.last[i],
                    collectives: t.calls[i],
                    wait_caused_us: us(t.caused[i]),
                    own_wait_us: us(t.waited[i]),
                }
            })
            .collect();
        let instances = coll.collectives.len();
        let mut active: Vec<f64> = ranks
            .ranks
            .iter()
            .map(|r| us(scope0(r).active_ns))
            .collect();
        let active_median = median(&mut active);
        let found = straggler_line(
            &stragglers,
            med,
            compute_med,
            active_median,
            (instances, coll.clock_alignment.trusted),
        );
        let median_comparison = match stragglers.as_slice() {
            [only] => one_rank_comparison(&only.rank, only.gpu_time_us),
            _ => {
                let by_gpu = stragglers
                    .iter()
                    .enumerate()
                    .max_by(|a, b| {
                        a.1.gpu_time_us
                            .total_cmp(&b.1.gpu_time_us)
                            .then(b.0.cmp(&a.0))
                    })
                    .map(|(_, r)| r);
                by_gpu.map_or(String::new(), |r| gpu_time_line(r, med))
            }
        };
        let late_ranks = match &found {
            Err(_) if instances > 0 && coll.clock_alignment.trusted => {
                let late = late_group(&stragglers, WAIT_THRESHOLD * active_median);
                late.iter().map(|&i| stragglers[i].rank.clone()).collect()
            }
            _ => Vec::new(),
        };
        let (straggler, no_straggler) = match found {
            Ok(s) => (Some(s), None),
            Err(why) => (None, Some(why)),
        };
        StragglersOut {
            stragglers,
            straggler,
            no_straggler,
            median_comparison,
            late_ranks,
        }
    }

    fn sections(r: &Report, screen: &Screen) -> Vec<Section> {
        let out = &r.out.stragglers;
        let coll = &r.out.collectives;
        let mut s = Section::new(
            "stragglers",
            "Stragglers (who arrived last, and the wait it caused)",
        );
        if !coll.collectives.is_empty() {
            s.lines.push(format!(
                "({} of {} matched collective calls line up across ranks: every rank ends after the last one starts)",
                coll.collectives_consistent,
                coll.collectives.len()
            ));
        }
        let rows = &out.stragglers;
        let shown: Vec<usize> = (0..rows.len())
            .filter(|&i| screen.ranks.contains(&rows[i].rank))
            .collect();
        let mut t = Table::new(
            "stragglers",
            "",
            vec![
                Column::new("rank", "rank", Unit::Text),
                Column::new("gpu_time_us", "gpu", Unit::Us),
                // Each against its own median: two headers of one name
                // could not tell which of the two a reader looks at.
                Column::new("vs_median_pct", "gpu vs median", Unit::PctChange),
                Column::new("compute_us", "compute", Unit::Us),
                Column::new(
                    "compute_vs_median_pct",
                    "compute vs median",
                    Unit::PctChange,
                ),
                Column::new("communication_us", "comm", Unit::Us),
                Column::new("busy_pct", "busy", Unit::Pct).files_only(),
                Column::new("arrived_last", "last", Unit::Count),
                Column::new("collectives", "of", Unit::Count),
                Column::new("wait_caused_us", "caused", Unit::Us),
                Column::new("own_wait_us", "waited", Unit::Us),
            ],
        );
        for x in rows {
            t.push(vec![
                Value::from(&x.rank),
                x.gpu_time_us.into(),
                x.vs_median_pct.into(),
                x.compute_us.into(),
                x.compute_vs_median_pct.into(),
                x.communication_us.into(),
                x.busy_pct.into(),
                x.arrived_last.into(),
                x.collectives.into(),
                x.wait_caused_us.into(),
                x.own_wait_us.into(),
            ]);
        }
        if !coll.clock_alignment.trusted && !coll.collectives.is_empty() {
            // Who arrived last means nothing on clocks that do not line
            // up (docs/tracestat.md#clock-alignment): the screens leave the
            // arrival columns out, as the collectives section leaves out
            // its skew and waits; the files keep them.
            s.lines.push(format!(
                "(arrivals left out: {})",
                coll.clock_alignment.reason
            ));
            for c in &mut t.columns {
                if ["arrived_last", "wait_caused_us", "own_wait_us"].contains(&c.name.as_str()) {
                    c.shown = unitrace_render::sections::Shown::FilesOnly;
                }
            }
        }
        limit_rows(&mut t, &shown, screen);
        s.tables.push(t);
        vec![s]
    }
}

/// The two lines that open the console report and the HTML page, after
/// `straggler: ` and `GPU time against the median: `: the straggler and
/// why, then `mergetrace --stats`' median comparison. One rank has nothing
/// to compare with, and the lines say so instead of naming it.
pub fn straggler_lines(r: &Report) -> Option<(String, String)> {
    let out = &r.out.stragglers;
    if let Some(s) = &out.straggler {
        return Some((
            format!("rank {}: {}", s.rank, s.reason),
            s.median_comparison.clone(),
        ));
    }
    let why = out.no_straggler.clone()?;
    Some((why, out.median_comparison.clone()))
}

/// The straggler line of a one-rank run (tracestat and `mergetrace
/// --stats` alike).
pub const ONE_RANK: &str = "none: one rank, nothing to compare with";

/// The rank with the most GPU time against the median rank's (`med`, us).
/// Its communication time is said beside: a rank that waits at its
/// collectives in communication kernels (NCCL's, oneCCL's) has the most
/// GPU time for that wait, and the straggler it waits for is another rank
/// (docs/tracestat.md#stragglers).
fn gpu_time_line(r: &StragglerRow, med: f64) -> String {
    let comm = if r.communication_us > 0.0 {
        format!(" ({:.3} ms communication)", r.communication_us / 1e3)
    } else {
        String::new()
    };
    format!(
        "rank {}: {:.3} ms of GPU time{comm}, {:+.1}% against the median rank ({:.3} ms)",
        r.rank,
        r.gpu_time_us / 1e3,
        r.vs_median_pct,
        med / 1e3
    )
}

/// The median comparison of a one-rank run.
pub fn one_rank_comparison(rank: &str, gpu_time_us: f64) -> String {
    format!(
        "{ONE_RANK} (rank {rank}: {:.3} ms of GPU time)",
        gpu_time_us / 1e3
    )
}

/// A rank stands out from the others by `value` when it is above their
/// median by more than both `relative` of that median (and `floor`) and
/// three robust standard deviations of the others (1.4826 x their median
/// absolute deviation): a fixed share alone would name a rank in every
/// noisy run, the spread alone one in every quiet run
/// (docs/tracestat.md#stragglers).
pub fn stands_out(value: f64, others: &[f64], relative: f64, floor: f64) -> bool {
    if others.is_empty() {
        return false;
    }
    let mut o = others.to_vec();
    let med = median(&mut o);
    let mut dev: Vec<f64> = others.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&mut dev);
    let threshold = (relative * med).max(floor).max(3.0 * 1.4826 * mad);
    value - med > threshold
}

/// Share of the median above which a rank's compute time stands out.
pub const COMPUTE_THRESHOLD: f64 = 0.05;
/// Share of the median rank's active window above which the wait a rank
/// caused at collectives can stand out; it must also be more than twice
/// the wait any other rank caused (arrivals are few and uneven, so a
/// spread estimate over them says little).
pub const WAIT_THRESHOLD: f64 = 0.01;

/// The others' values of `key` (all rows but `i`).
fn others(rows: &[StragglerRow], i: usize, key: fn(&StragglerRow) -> f64) -> Vec<f64> {
    rows.iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, r)| key(r))
        .collect()
}

/// The straggler: a rank that stands out, by the wait it caused at
/// collectives (when arrivals can be trusted), else by compute time; none
/// otherwise, and `why` says so.
fn straggler_line(
    rows: &[StragglerRow],
    med: f64,
    compute_med: f64,
    active_median_us: f64,
    (instances, trusted): (usize, bool),
) -> Result<Straggler, String> {
    match rows.len() {
        0 => return Err("none: no rank".to_string()),
        1 => return Err(ONE_RANK.to_string()),
        _ => {}
    }
    let most = |key: fn(&StragglerRow) -> f64| {
        rows.iter()
            .enumerate()
            .max_by(|a, b| key(a.1).total_cmp(&key(b.1)).then(b.0.cmp(&a.0)))
            .map(|(i, _)| i)
            .unwrap_or(0)
    };
    let median_comparison = gpu_time_line(&rows[most(|r| r.gpu_time_us)], med);
    if instances > 0 && trusted {
        let i = most(|r| r.wait_caused_us);
        let r = &rows[i];
        let runner_up = others(rows, i, |r| r.wait_caused_us)
            .into_iter()
            .fold(0.0, f64::max);
        let floor = WAIT_THRESHOLD * active_median_us;
        if r.arrived_last > 0 && r.wait_caused_us > floor && r.wait_caused_us > 2.0 * runner_up {
            return Ok(Straggler {
                rank: r.rank.clone(),
                reason: format!(
                    "arrived last at {} of {} collectives and made the other ranks wait {:.3} ms in total",
                    r.arrived_last,
                    instances,
                    r.wait_caused_us / 1e3
                ),
                median_comparison,
                by_arrivals: true,
            });
        }
    }
    let i = most(|r| r.compute_us);
    let r = &rows[i];
    if stands_out(
        r.compute_us,
        &others(rows, i, |r| r.compute_us),
        COMPUTE_THRESHOLD,
        0.0,
    ) {
        return Ok(Straggler {
            rank: r.rank.clone(),
            reason: format!(
                "most compute time: {:.3} ms, {:+.1}% against the median rank ({:.3} ms){}",
                r.compute_us / 1e3,
                r.compute_vs_median_pct,
                compute_med / 1e3,
                if instances > 0 && !trusted {
                    "; collective arrivals not used: the matched calls do not line up across ranks"
                } else {
                    ""
                }
            ),
            median_comparison,
            by_arrivals: false,
        });
    }
    Err(format!(
        "none: no rank stands out (the most compute time, rank {}, is {:+.1}% against the median rank; a straggler needs more than {:.0}% and three times the spread of the others{})",
        r.rank,
        r.compute_vs_median_pct,
        100.0 * COMPUTE_THRESHOLD,
        if instances > 0 && trusted {
            arrivals_note(rows, WAIT_THRESHOLD * active_median_us)
        } else {
            String::new()
        }
    ))
}

/// The ranks whose arrivals made the others wait notably (more than
/// `floor` µs), the most first, at most 3: none when fewer than two did
/// (one alone would have been the straggler, or its wait is too short).
fn notable_arrivals(rows: &[StragglerRow], floor: f64) -> Vec<usize> {
    let mut notable: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].arrived_last > 0 && rows[i].wait_caused_us > floor)
        .collect();
    if notable.len() < 2 {
        return Vec::new();
    }
    notable.sort_by(|&a, &b| {
        (rows[b].wait_caused_us)
            .total_cmp(&rows[a].wait_caused_us)
            .then(a.cmp(&b))
    });
    notable
}

/// Ranks that stand out together by the wait they caused, as a straggler
/// stands out alone: the fewest, 2 or 3 and at most half the ranks, each
/// past `floor` and each causing more than twice the wait of any other
/// rank (the most first). Ranks late by turns through the run, as
/// unplanted runs are, do not: their waits fall off step by step.
fn late_group(rows: &[StragglerRow], floor: f64) -> Vec<usize> {
    let notable = notable_arrivals(rows, floor);
    let caused = |k: usize| -> f64 {
        let mut rest: Vec<f64> = (0..rows.len())
            .filter(|i| !notable[..k].contains(i))
            .map(|i| rows[i].wait_caused_us)
            .collect();
        rest.push(0.0);
        rest.into_iter().fold(0.0, f64::max)
    };
    (2..=3.min(rows.len() / 2).min(notable.len()))
        .find(|&k| rows[notable[k - 1]].wait_caused_us > 2.0 * caused(k))
        .map_or_else(Vec::new, |k| notable[..k].to_vec())
}

/// Why the arrivals name no straggler: none made the others wait notably,
/// or several did, about alike (at most 3 named, the most first): ranks
/// that each hold the others up are worth a look though none stands out
/// alone (docs/tracestat.md#stragglers).
fn arrivals_note(rows: &[StragglerRow], floor: f64) -> String {
    let notable = notable_arrivals(rows, floor);
    if notable.is_empty() {
        return ", and no rank's arrivals at collectives made the others wait notably longer"
            .to_string();
    }
    let named: Vec<String> = notable
        .iter()
        .take(3)
        .map(|&i| {
            let r = &rows[i];
            format!(
                "rank {} {:.3} ms (last at {} of {})",
                r.rank,
                r.wait_caused_us / 1e3,
                r.arrived_last,
                r.collectives
            )
        })
        .collect();
    format!(
        "; by arrivals, {} ranks made the others wait, none twice as long as the rest: {}",
        notable.len(),
        named.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(caused: &[f64]) -> Vec<StragglerRow> {
        (caused.iter().enumerate())
            .map(|(i, &c)| StragglerRow {
                rank: i.to_string(),
                gpu_time_us: 0.0,
                vs_median_pct: 0.0,
                compute_us: 0.0,
                compute_vs_median_pct: 0.0,
                communication_us: 0.0,
                busy_pct: 0.0,
                arrived_last: u64::from(c > 0.0),
                collectives: 10,
                wait_caused_us: c,
                own_wait_us: 0.0,
            })
            .collect()
    }

    /// The waits of the recordings: FSDP's two late ranks stand out
    /// together, the clean run's ranks late by turns do not; a group is at
    /// most 3 and half the ranks, each past the floor and twice any other.
    #[test]
    fn a_late_group_stands_out_as_a_straggler_does_alone() {
        let fsdp = [0.0, 171_180.5, 162_393.1, 116.4];
        assert_eq!(late_group(&rows(&fsdp), 1_387.0), vec![1, 2]);
        let clean = [6_408.4, 0.0, 15_398.7, 11_202.5];
        assert_eq!(late_group(&rows(&clean), 335.0), Vec::<usize>::new());
        let three = [50.0, 1.0, 48.0, 1.0, 47.0, 2.0];
        assert_eq!(late_group(&rows(&three), 10.0), vec![0, 2, 4]);
        // Three of four is more than half the ranks.
        assert!(late_group(&rows(&[50.0, 48.0, 47.0, 1.0]), 10.0).is_empty());
        // The second is not twice the third, but the three stand out.
        let top3 = [50.0, 48.0, 30.0, 0.0, 0.0, 0.0];
        assert_eq!(late_group(&rows(&top3), 10.0), vec![0, 1, 2]);
        // Neither two nor three stand out: the waits fall off by turns.
        assert!(late_group(&rows(&[50.0, 48.0, 30.0, 20.0, 0.0, 0.0]), 10.0).is_empty());
        // Past the floor, each of them.
        assert!(late_group(&rows(&[50.0, 8.0, 0.0, 0.0]), 10.0).is_empty());
        // One alone is the straggler's rule, not a group's.
        assert!(late_group(&rows(&[50.0, 1.0, 0.0, 0.0]), 10.0).is_empty());
    }
}
