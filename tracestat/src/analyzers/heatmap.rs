//! Device utilisation per rank over time (docs/tracestat.md#heatmap):
//! each rank keeps its busy time per fine bin of an absolute power-of-two
//! grid (so rows of different ranks and partials combine); the report
//! spreads them over `--bins` columns of the whole run.

use serde::{Deserialize, Serialize};
use unitrace_render::sections::{Column, Figure, Section, Table, Unit, Value};

use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::figures::{heatmap_svg, heatmap_text, HeatData, MAX_ROWS};
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

#[derive(Debug, Clone, Serialize)]
pub struct HeatmapTable {
    pub bins: usize,
    pub start_us: f64,
    pub bin_us: f64,
    /// `(rank, utilisation 0..1 per bin)`, ranks sorted by id.
    pub rows: Vec<(String, Vec<f64>)>,
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
        HeatmapOut {
            heatmap: heatmap(ranks, &offsets),
        }
    }

    fn sections(r: &Report, _: &Screen) -> Vec<Section> {
        let h = &r.out.heatmap;
        let straggler = r.out.stragglers.straggler.as_ref().map(|s| s.rank.as_str());
        let mut s = Section::new("heatmap", "GPU utilisation per rank over time");
        let data = HeatData {
            rows: &h.heatmap.rows,
            bins: h.heatmap.bins,
            bin_us: h.heatmap.bin_us,
        };
        let text = heatmap_text(&data, straggler);
        let mut caption =
            "Time since the earliest rank's first event; colour: GPU busy share of the bin."
                .to_string();
        if h.heatmap.rows.len() > MAX_ROWS {
            caption.push_str(&format!(
                " {} ranks in groups of {}: each row is the group's mean utilisation; the straggler's own row comes first.",
                h.heatmap.rows.len(),
                h.heatmap.rows.len().div_ceil(MAX_ROWS)
            ));
        }
        s.figures.push(Figure {
            svg: Some(heatmap_svg(&data, straggler)),
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
/// start, with 3 decimals, or with as many more as it takes to tell the
/// bins apart (bins under 1 ns), since Parquet readers refuse repeated
/// column names (docs/tracestat.md#heatmap). A run without a time span has
/// one start for every bin: its bins are named by index (`0`, `1`, ...).
pub fn heat_bin_names(bins: usize, bin_us: f64) -> Vec<String> {
    for decimals in 3..=12 {
        let names: Vec<String> = (0..bins)
            .map(|j| format!("{:.*}", decimals, j as f64 * bin_us))
            .collect();
        // Starts increase, so equal names can only be neighbours.
        if names.windows(2).all(|w| w[0] != w[1]) {
            return names;
        }
    }
    (0..bins).map(|j| j.to_string()).collect()
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
    HeatRow {
        width_ns: width,
        first_bin,
        busy_ns: busy,
    }
}

/// Utilisation per rank per bin over the whole run.
fn heatmap(ranks: &Ranks<'_>, offsets: &[Ns]) -> HeatmapTable {
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
    let bin = span / bins as f64;
    let mut rows = Vec::with_capacity(ranks.ranks.len());
    for ((r, label), off) in ranks.ranks.iter().zip(&ranks.labels).zip(offsets) {
        let mut util = vec![0.0; bins];
        let h = Heatmap::part(r);
        if bin > 0.0 && h.width_ns > 0 {
            for (i, &busy) in h.busy_ns.iter().enumerate() {
                if busy == 0 {
                    continue;
                }
                // Spread the fine bin's busy time evenly over the coarse
                // bins it overlaps, within the run: a fine bin sticking out
                // before the earliest start or after the latest end holds
                // no busy time there, and none may be lost.
                let s0 = ((h.first_bin + i as i64) * h.width_ns - off - g0) as f64;
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
            for u in &mut util {
                *u = (*u / bin).min(1.0);
            }
        }
        rows.push((label.clone(), util));
    }
    HeatmapTable {
        bins,
        start_us: us(g0),
        bin_us: bin / 1e3,
        rows,
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
    fn heat_bin_names_are_distinct_at_any_width() {
        assert_eq!(heat_bin_names(3, 1.5), ["0.000", "1.500", "3.000"]);
        // 0.7 ns bins: 3 decimals of us would repeat `0.001`.
        assert_eq!(
            heat_bin_names(4, 0.0007),
            ["0.0000", "0.0007", "0.0014", "0.0021"]
        );
        assert_eq!(heat_bin_names(3, 0.0), ["0", "1", "2"]);
        for (bins, width) in [(100_000, 0.0001), (200, 1e-9), (7, 3.0)] {
            let names = heat_bin_names(bins, width);
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), bins, "{bins} x {width}");
        }
    }
}
