//! Stall chart pages of one kernel (docs/compatibility.md#analyze-stall-charts), used by the
//! stall mode (`crate::stall`).
//!
//! Kept as the original: the eight stall types of docs/compatibility.md#analyze-stall-charts in that
//! order, one series each (legend = column names); only rows with a
//! non-zero count are charted; X positions 0..n-1 over the kept rows in file
//! order, every tick labelled with the row's `IP[Address]` text as written
//! in the CSV; X label `IP[Address]`, Y label `Events`; 100 instructions
//! per page, the title suffix `(p/N)` when there are several pages; a line
//! chart for >= 2 rows on a page and a bar chart for one.
//!
//! docs/compatibility.md#analyze-quirk-14, decided: `PSDepStall[Events]` (Xe2) is a
//! stall reason like the others, so it is charted as a ninth series, after
//! the eight, whenever one row of the kernel has a non-zero count (files
//! without the column, i.e. every pre-Xe2 file, draw exactly the original's
//! eight series), and a row with only PSDep stalls is kept. `Active[Events]`
//! counts active cycles, not stalls, and stays out of the charts (it would
//! dwarf every stall series and hide them).

use unitrace_core::stall_csv::{StallRow, StallType};

use crate::render::{Chart, Series};

/// Instructions per chart page (docs/compatibility.md#analyze-stall-charts).
pub const ROWS_PER_PAGE: usize = 100;

/// Stall types charted for `rows`: the eight of the original, plus
/// `PSDepStall[Events]` when any row has it (docs/compatibility.md#analyze-quirk-14).
pub fn charted_types(rows: &[StallRow]) -> Vec<StallType> {
    let mut types = StallType::REPORTED.to_vec();
    if rows.iter().any(|r| r.count(StallType::PSDep) != 0) {
        types.push(StallType::PSDep);
    }
    types
}

/// Whether `row` has a stall event of a charted type (docs/compatibility.md#analyze-stall-charts,
/// plus PSDep stalls, docs/compatibility.md#analyze-quirk-14).
pub fn has_charted_stall(row: &StallRow) -> bool {
    row.has_reported_stall() || row.count(StallType::PSDep) != 0
}

/// The chart pages of one kernel: empty when no row has a stall event (the
/// caller prints the original's "No stall events" message).
pub fn stall_chart_pages(title: &str, kernel: &str, rows: &[StallRow]) -> Vec<Chart> {
    let kept: Vec<&StallRow> = rows.iter().filter(|r| has_charted_stall(r)).collect();
    if kept.is_empty() {
        return Vec::new();
    }
    let types = charted_types(rows);
    let pages = kept.len().div_ceil(ROWS_PER_PAGE);
    kept.chunks(ROWS_PER_PAGE)
        .enumerate()
        .map(|(p, chunk)| {
            let second = if pages == 1 {
                format!("({kernel})")
            } else {
                format!("({kernel})({}/{pages})", p + 1)
            };
            let series = types
                .iter()
                .map(|t| Series {
                    name: t.column_name().to_string(),
                    points: chunk
                        .iter()
                        .enumerate()
                        .map(|(i, r)| (i as f64, r.count(*t) as f64))
                        .collect(),
                })
                .collect();
            Chart {
                title_lines: vec![title.to_string(), second],
                x_label: "IP[Address]".to_string(),
                y_label: "Events".to_string(),
                series,
                kind: Chart::kind_for_points(chunk.len()),
                x_tick_labels: Some(chunk.iter().map(|r| r.ip_text.clone()).collect()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::ChartKind;

    fn row(ip: u64, counts: &[(StallType, u64)]) -> StallRow {
        let mut c = [0u64; StallType::COUNT];
        for &(t, n) in counts {
            c[t.index()] = n;
        }
        StallRow {
            kernel: "k".to_string(),
            ip,
            ip_text: format!("{ip:08x}"),
            counts: c,
            line: ip + 2,
            offset: 0,
        }
    }

    #[test]
    fn filters_zero_rows_and_pages_by_100() {
        let mut rows = Vec::new();
        for i in 0..250u64 {
            // Every other row has no stall; Active alone does not count.
            if i % 2 == 0 {
                rows.push(row(i * 16, &[(StallType::Sbid, i + 1)]));
            } else {
                rows.push(row(i * 16, &[(StallType::Active, 7)]));
            }
        }
        let pages = stall_chart_pages("T", "kern", &rows);
        // 125 kept rows: pages of 100 and 25.
        assert_eq!(pages.len(), 2);
        assert_eq!(pages[0].title_lines, vec!["T", "(kern)(1/2)"]);
        assert_eq!(pages[1].title_lines, vec!["T", "(kern)(2/2)"]);
        assert_eq!(pages[0].series.len(), 8);
        assert_eq!(pages[0].series[0].name, "ControlStall[Events]");
        assert_eq!(pages[0].series[7].name, "OtherStall[Events]");
        let sbid = &pages[1].series[4];
        assert_eq!(sbid.points.len(), 25);
        assert_eq!(sbid.points[0], (0.0, 201.0));
        let labels = pages[0].x_tick_labels.as_ref().unwrap();
        assert_eq!(labels.len(), 100);
        assert_eq!(labels[1], format!("{:08x}", 32));
        assert_eq!(pages[0].x_label, "IP[Address]");
        assert_eq!(pages[0].y_label, "Events");
        assert_eq!(pages[0].kind, ChartKind::Line);
    }

    #[test]
    fn single_page_title_and_bar_for_one_row() {
        let rows = vec![row(0x10, &[(StallType::Control, 3)]), row(0x20, &[])];
        let pages = stall_chart_pages("Perf", "k", &rows);
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].title_lines, vec!["Perf", "(k)"]);
        assert_eq!(pages[0].kind, ChartKind::Bar);
        assert!(stall_chart_pages("Perf", "k", &[row(0, &[])]).is_empty());
    }

    /// docs/compatibility.md#analyze-quirk-14: the original drops rows whose only
    /// stalls are PSDep stalls and never shows that series.
    #[test]
    fn psdep_stalls_are_charted() {
        let rows = vec![
            row(0x10, &[(StallType::PSDep, 5)]),
            row(0x20, &[(StallType::Pipe, 1)]),
        ];
        let pages = stall_chart_pages("T", "k", &rows);
        assert_eq!(pages.len(), 1);
        let names: Vec<_> = pages[0].series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.last(), Some(&"PSDepStall[Events]"));
        assert_eq!(pages[0].series[8].points, vec![(0.0, 5.0), (1.0, 0.0)]);
        // Without PSDep counts: exactly the original's eight series.
        let pages = stall_chart_pages("T", "k", &rows[1..]);
        assert_eq!(pages[0].series.len(), 8);
    }
}
