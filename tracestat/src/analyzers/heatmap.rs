//! Device utilisation per rank over time (docs/tracestat.md#heatmap):
//! each rank keeps its busy time per fine bin of an absolute power-of-two
//! grid (so rows of different ranks and partials combine); the report
//! spreads them over `--bins` columns of the whole run.

use serde::{Deserialize, Serialize};
use unitrace_render::sections::{Column, Figure, Section, Table, Unit, Value};

use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::figures::{heatmap_svg, heatmap_text, HeatData, HeatItem, MAX_ROWS};
use crate::rank_model::RankModel;
use crate::time::{us, Ns};

/// GPU busy time per fine bin of an absolute grid: bin `i` covers
/// `[(first_bin + i) * width, ...)`. Widths are powers of two, so rows of
/// different ranks and partials combine.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HeatRow {
    pub width_ns: Ns,
    pub first_bin: i64,
    pub busy_ns: Vec<Ns>,
}

/// Largest number of rows of the heatmap table (docs/tracestat.md#heatmap).
pub const MAX_HEAT_ROWS: usize = 4096;
/// Largest number of cells (rows x bins) of the heatmap table: it bounds
/// the table's memory and its CSV and JSON size whatever the ranks and
/// `--bins` (docs/tracestat.md#heatmap).
pub const MAX_HEAT_CELLS: usize = 1 << 20;

#[derive(Debug, Clone, Serialize)]
pub struct HeatmapTable {
    pub bins: usize,
    pub start_us: f64,
    pub bin_us: f64,
    /// Consecutive ranks per row: 1 (a row per rank), or when there are
    /// more ranks than [`heat_row_limit`] rows, the size of the groups (the
    /// last group may be smaller).
    pub ranks_per_row: usize,
    /// `(rank, utilisation 0..1 per bin)` in rank order; with groups
    /// `(first-last, the group's mean utilisation per bin)`.
    pub rows: Vec<(String, Vec<f64>)>,
    /// With groups, the straggler's own row (the page and the console draw
    /// it apart, so that a group mean cannot hide it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub straggler_row: Option<(String, Vec<f64>)>,
    /// The ranks each row stands for (first and last label, how many).
    #[serde(skip)]
    pub spans: Vec<RankSpan>,
}

/// The ranks one heatmap row stands for.
#[derive(Debug, Clone, PartialEq)]
pub struct RankSpan {
    pub first: String,
    pub last: String,
    pub ranks: usize,
}

/// The most rows the heatmap table has with `bins` bins and `--heat-rows
/// rows`: at most `rows` (at most [`MAX_HEAT_ROWS`]), and at most
/// [`MAX_HEAT_CELLS`] cells.
pub fn heat_row_limit(bins: usize, rows: usize) -> usize {
    (MAX_HEAT_CELLS / bins.max(1))
        .min(rows)
        .clamp(1, MAX_HEAT_ROWS)
}

/// Ranks per row of the heatmap table: one, or the fewest consecutive
/// ranks per row that keep the rows within [`heat_row_limit`].
pub fn ranks_per_row(ranks: usize, bins: usize, rows: usize) -> usize {
    ranks.div_ceil(heat_row_limit(bins, rows)).max(1)
}

#[derive(Debug, Clone, Serialize)]
pub struct HeatmapOut {
    pub heatmap: HeatmapTable,
}

pub struct Heatmap;

impl Analyzer for Heatmap {
    type Rank = HeatRow;
    type Output = HeatmapOut;

    fn observe(m: &RankModel<'_>, o: &RankOptions) -> HeatRow {
        heat_row(
            m.first,
            m.last,
            &m.scopes[0].sweep.segments,
            o.heat_resolution,
        )
    }

    fn part(rank: &RankSummary) -> &Self::Rank {
        &rank.parts.heatmap
    }

    fn finish(ranks: &Ranks<'_>, done: &Finished) -> HeatmapOut {
        let offsets = done
            .collectives
            .as_ref()
            .map(|c| c.clock_alignment.offset_ns.clone())
            .unwrap_or_else(|| vec![0; ranks.ranks.len()]);
        let straggler = done
            .stragglers
            .as_ref()
            .and_then(|s| s.straggler.as_ref())
            .map(|s| s.rank.as_str());
        HeatmapOut {
            heatmap: heatmap(ranks, &offsets, straggler),
        }
    }

    fn sections(r: &Report, _: &Screen) -> Vec<Section> {
        let h = &r.out.heatmap;
        let straggler = r.out.stragglers.straggler.as_ref().map(|s| s.rank.as_str());
        let mut s = Section::new("heatmap", "GPU utilisation per rank over time");
        let data = heat_data(&h.heatmap, straggler);
        let text = heatmap_text(&data);
        let mut caption =
            "Time since the earliest rank's first event; colour: GPU busy share of the bin."
                .to_string();
        let ranks: usize = h.heatmap.spans.iter().map(|s| s.ranks).sum();
        if h.heatmap.rows.len() > MAX_ROWS || h.heatmap.ranks_per_row > 1 {
            let per = h.heatmap.rows.len().div_ceil(MAX_ROWS) * h.heatmap.ranks_per_row;
            caption.push_str(&format!(
                " {ranks} ranks in groups of {per}: each row is the group's mean utilisation; the straggler's own row comes first."
            ));
        }
        s.figures.push(Figure {
            svg: Some(heatmap_svg(&data)),
            text: None,
            caption,
        });
        if let Some((caption, text)) = text {
            s.figures.push(Figure {
                svg: None,
                text: Some(text),
                caption,
            });
        }
        s.tables.push(table(&h.heatmap));
        vec![s]
    }
}

fn table(h: &HeatmapTable) -> Table {
    let mut columns = vec![Column::new("rank", "rank", Unit::Text)];
    columns.extend(
        heat_bin_names(h.bins, h.bin_us)
            .into_iter()
            .map(|n| Column::new(n.clone(), n, Unit::Fraction)),
    );
    let mut t = Table::new("heatmap", "", columns);
    t.files_only = true;
    for (rank, util) in &h.rows {
        let mut row = vec![Value::from(rank)];
        row.extend(util.iter().map(|&u| Value::Num(u)));
        t.push(row);
    }
    t
}

/// The heatmap's column names: each bin's start in us since the earliest
/// start, `from_12.500_us`, with 3 decimals, or with as many more as it
/// takes to tell the bins apart (bins under 1 ns), since Parquet readers
/// refuse repeated column names. A run without a time span has one start
/// for every bin: its bins are named by index (`bin_0`, `bin_1`, ...). No
/// name is a number: a CSV whose header and rows are all numbers (one
/// rank, labelled `#0`) has its header read as a data row by the CSV
/// sniffers (DuckDB's `read_csv_auto`), docs/tracestat.md#heatmap.
pub fn heat_bin_names(bins: usize, bin_us: f64) -> Vec<String> {
    for decimals in 3..=12 {
        let names: Vec<String> = (0..bins)
            .map(|j| format!("from_{:.*}_us", decimals, j as f64 * bin_us))
            .collect();
        // Starts increase, so equal names can only be neighbours.
        if names.windows(2).all(|w| w[0] != w[1]) {
            return names;
        }
    }
    (0..bins).map(|j| format!("bin_{j}")).collect()
}

/// Smallest power of two not below `wall / resolution`.
fn heat_width(wall: Ns, resolution: u32) -> Ns {
    let target = (wall / resolution.max(1) as Ns).max(1);
    let mut w: Ns = 1;
    while w < target {
        w <<= 1;
    }
    w
}

fn heat_row(first: Ns, last: Ns, segments: &[(Ns, Ns)], resolution: u32) -> HeatRow {
    if last <= first {
        return HeatRow::default();
    }
    let width = heat_width(last - first, resolution);
    let first_bin = first.div_euclid(width);
    let last_bin = (last - 1).div_euclid(width);
    let mut busy = vec![0 as Ns; (last_bin - first_bin + 1) as usize];
    for &(s, e) in segments {
        let mut t = s;
        while t < e {
            let bin = t.div_euclid(width);
            let bin_end = (bin + 1) * width;
            let upto = e.min(bin_end);
            busy[(bin - first_bin) as usize] += upto - t;
            t = upto;
        }
    }
    // Idle bins before the first and after the last busy one are left out
    // (they hold nothing): a rank busy for a short stretch of a long run
    // keeps a few numbers, not ~1024 (docs/tracestat.md#many-ranks).
    let Some(lead) = busy.iter().position(|&b| b != 0) else {
        return HeatRow {
            width_ns: width,
            first_bin,
            busy_ns: Vec::new(),
        };
    };
    let end = busy.iter().rposition(|&b| b != 0).map_or(lead, |i| i + 1);
    busy.truncate(end);
    busy.drain(..lead);
    busy.shrink_to_fit();
    HeatRow {
        width_ns: width,
        first_bin: first_bin + lead as i64,
        busy_ns: busy,
    }
}

/// What the figures draw from the table: its rows with the ranks each
/// stands for, and the straggler's own row (its row in the table when
/// rows are ranks).
fn heat_data<'a>(h: &'a HeatmapTable, straggler: Option<&'a str>) -> HeatData<'a> {
    let rows: Vec<HeatItem<'a>> = h
        .rows
        .iter()
        .zip(&h.spans)
        .map(|((_, util), span)| HeatItem {
            first: &span.first,
            last: &span.last,
            ranks: span.ranks,
            util,
        })
        .collect();
    let own = match &h.straggler_row {
        Some((label, util)) => Some((label.as_str(), util.as_slice())),
        None => straggler.and_then(|s| {
            rows.iter()
                .find(|r| r.ranks == 1 && r.first == s)
                .map(|r| (r.first, r.util))
        }),
    };
    HeatData {
        rows,
        straggler: own,
        bins: h.bins,
        bin_us: h.bin_us,
    }
}

/// The report's time bins: `bins` of `bin` ns over `span` ns from `g0`.
struct Grid {
    g0: Ns,
    span: f64,
    bin: f64,
    bins: usize,
}

impl Grid {
    /// One rank's utilisation per bin into `util` (overwritten).
    fn rank_row(&self, h: &HeatRow, off: Ns, util: &mut [f64]) {
        util.fill(0.0);
        let (bin, bins, span) = (self.bin, self.bins, self.span);
        if bin <= 0.0 || h.width_ns <= 0 {
            return;
        }
        for (i, &busy) in h.busy_ns.iter().enumerate() {
            if busy == 0 {
                continue;
            }
            // Spread the fine bin's busy time evenly over the coarse bins
            // it overlaps, within the run: a fine bin sticking out before
            // the earliest start or after the latest end holds no busy
            // time there, and none may be lost.
            let s0 = ((h.first_bin + i as i64) * h.width_ns - off - self.g0) as f64;
            let (s, e) = (s0.max(0.0), (s0 + h.width_ns as f64).min(span));
            if e <= s {
                continue;
            }
            let mut j = ((s / bin).floor() as usize).min(bins - 1);
            while j < bins {
                let bs = j as f64 * bin;
                let be = bs + bin;
                if bs >= e {
                    break;
                }
                let ov = e.min(be) - s.max(bs);
                if ov > 0.0 {
                    util[j] += busy as f64 * ov / (e - s);
                }
                j += 1;
            }
        }
        for u in util.iter_mut() {
            *u = (*u / bin).min(1.0);
        }
    }
}

/// Utilisation per bin over the whole run: a row per rank, or per group
/// of [`ranks_per_row`] consecutive ranks (the mean of their rows), plus
/// then the straggler's own row.
fn heatmap(ranks: &Ranks<'_>, offsets: &[Ns], straggler: Option<&str>) -> HeatmapTable {
    let live: Vec<(&RankSummary, Ns)> = ranks
        .ranks
        .iter()
        .zip(offsets.iter().copied())
        .filter(|(r, _)| r.last_ns > r.first_ns)
        .collect();
    let g0 = live.iter().map(|(r, o)| r.first_ns - o).min().unwrap_or(0);
    let g1 = live.iter().map(|(r, o)| r.last_ns - o).max().unwrap_or(0);
    let bins = ranks.options.bins.max(1);
    let span = (g1 - g0).max(0) as f64;
    let grid = Grid {
        g0,
        span,
        bin: span / bins as f64,
        bins,
    };
    let n = ranks.ranks.len();
    let per = ranks_per_row(n, bins, ranks.options.heat_rows);
    let mut rows = Vec::with_capacity(n.div_ceil(per));
    let mut spans = Vec::with_capacity(n.div_ceil(per));
    let mut one = vec![0.0; bins];
    for start in (0..n).step_by(per) {
        let end = (start + per).min(n);
        let mut util = vec![0.0; bins];
        for (rank, &off) in ranks.ranks[start..end].iter().zip(&offsets[start..end]) {
            grid.rank_row(Heatmap::part(rank), off, &mut one);
            util.iter_mut().zip(&one).for_each(|(u, x)| *u += x);
        }
        let count = end - start;
        if count > 1 {
            util.iter_mut().for_each(|u| *u /= count as f64);
        }
        let span = RankSpan {
            first: ranks.labels[start].clone(),
            last: ranks.labels[end - 1].clone(),
            ranks: count,
        };
        let label = if count == 1 {
            span.first.clone()
        } else {
            format!("{}-{}", span.first, span.last)
        };
        rows.push((label, util));
        spans.push(span);
    }
    let straggler_row = match (per > 1, straggler) {
        (true, Some(s)) => ranks.labels.iter().position(|l| l == s).map(|i| {
            grid.rank_row(Heatmap::part(&ranks.ranks[i]), offsets[i], &mut one);
            (s.to_string(), one.clone())
        }),
        _ => None,
    };
    HeatmapTable {
        bins,
        start_us: us(g0),
        bin_us: grid.bin / 1e3,
        ranks_per_row: per,
        rows,
        straggler_row,
        spans,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_bins_on_a_power_of_two_grid() {
        let row = heat_row(0, 1024, &[(0, 100), (700, 800)], 4);
        assert_eq!(row.width_ns, 256);
        assert_eq!(row.first_bin, 0);
        assert_eq!(row.busy_ns, vec![100, 0, 68, 32]);
    }

    #[test]
    fn rows_keep_to_4096_and_to_a_million_cells() {
        assert_eq!(heat_row_limit(200, MAX_HEAT_ROWS), 4096);
        assert_eq!(heat_row_limit(4096, MAX_HEAT_ROWS), 256);
        assert_eq!(heat_row_limit(4, 5), 5);
        assert_eq!(ranks_per_row(4096, 200, MAX_HEAT_ROWS), 1);
        assert_eq!(ranks_per_row(65_536, 200, MAX_HEAT_ROWS), 16);
        assert_eq!(ranks_per_row(65_536, 4096, MAX_HEAT_ROWS), 256);
        assert_eq!(ranks_per_row(10, 4, 5), 2);
        assert_eq!(ranks_per_row(10, 4, 4), 3);
        assert_eq!(ranks_per_row(0, 4, 4), 1);
    }

    #[test]
    fn idle_bins_at_either_end_are_left_out() {
        // Busy 300-400 of 0-1024: bin 1 only.
        let row = heat_row(0, 1024, &[(300, 400)], 4);
        assert_eq!((row.width_ns, row.first_bin), (256, 1));
        assert_eq!(row.busy_ns, vec![100]);
        // Never busy: nothing kept.
        let row = heat_row(0, 1024, &[], 4);
        assert!(row.busy_ns.is_empty());
    }

    #[test]
    fn heat_bin_names_are_distinct_at_any_width() {
        assert_eq!(
            heat_bin_names(3, 1.5),
            ["from_0.000_us", "from_1.500_us", "from_3.000_us"]
        );
        // 0.7 ns bins: 3 decimals of us would repeat `0.001`.
        assert_eq!(
            heat_bin_names(4, 0.0007),
            [
                "from_0.0000_us",
                "from_0.0007_us",
                "from_0.0014_us",
                "from_0.0021_us"
            ]
        );
        assert_eq!(heat_bin_names(3, 0.0), ["bin_0", "bin_1", "bin_2"]);
        for (bins, width) in [(100_000, 0.0001), (200, 1e-9), (7, 3.0)] {
            let names = heat_bin_names(bins, width);
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), bins, "{bins} x {width}");
        }
    }
}
