//! Per-rank view of a summary archive (beyond summary.py, which does not
//! tell ranks apart, docs/compatibility.md#summary): one row per process with the time
//! and calls of each category, its wallclock, and for every time column the
//! slowest rank and how far it is from the median, so stragglers show at a
//! glance.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use unitrace_core::summary_text::ProcessReport;
use unitrace_render::parquet::{Column as ParquetColumn, Schema};
use unitrace_render::table::{TableFormat, TableWriter};

use crate::coverage::{coverage_lines, Coverage};

/// Interned category names in first-use order: the category columns of the
/// table.
#[derive(Default)]
pub struct Categories {
    pub names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Categories {
    pub fn id(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.index.insert(name.to_string(), self.names.len());
        self.names.push(name.to_string());
        self.names.len() - 1
    }
}

/// Rank and pid of a process, from the CCL banner or the file name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessId {
    pub rank: Option<u64>,
    pub pid: Option<u64>,
}

/// Files of one `--result-dir` process directory (docs/formats.md#result-dir).
const RESULT_DIR_FILES: [&str; 6] = [
    "host_timing.txt",
    "device_timing.txt",
    "device_submission.txt",
    "ccl_summary_report.txt",
    "call_logging.txt",
    "device_timeline.txt",
];

fn split_dir(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(at) => (&path[..at], &path[at + 1..]),
        None => ("", path),
    }
}

/// The member path of a legacy log, or the directory of a result-dir
/// process: all members of one process share this key.
pub fn process_key(member: &str) -> String {
    let (dir, base) = split_dir(member);
    if RESULT_DIR_FILES.contains(&base) && !dir.is_empty() {
        dir.to_string()
    } else {
        member.to_string()
    }
}

impl ProcessId {
    /// `output.<pid>.<rank>.txt` / `output.<pid>[.<rank>]` (legacy `-o`) or
    /// `…/rank_<rank>.<app>.<pid>/device_timing.txt` (`--result-dir`).
    pub fn from_member_path(member: &str) -> ProcessId {
        let key = process_key(member);
        let (_, base) = split_dir(&key);
        if key != member {
            // Result-dir: [rank_<r>.]<app>.<pid>
            let mut id = ProcessId::default();
            let mut rest = base;
            if let Some(r) = base.strip_prefix("rank_") {
                let (rank, tail) = r.split_once('.').unwrap_or((r, ""));
                id.rank = rank.parse().ok();
                rest = tail;
            }
            id.pid = rest.rsplit('.').next().and_then(|p| p.parse().ok());
            return id;
        }
        let parts: Vec<&str> = base.split('.').collect();
        let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let mut end = parts.len();
        while end > 0 && !numeric(parts[end - 1]) {
            end -= 1;
        }
        let mut start = end;
        while start > 0 && numeric(parts[start - 1]) {
            start -= 1;
        }
        // The first component is the -o stem, never an id.
        let start = start.max(1);
        match end.saturating_sub(start) {
            0 => ProcessId::default(),
            1 => ProcessId {
                rank: None,
                pid: parts[start].parse().ok(),
            },
            _ => ProcessId {
                pid: parts[end - 2].parse().ok(),
                rank: parts[end - 1].parse().ok(),
            },
        }
    }
}

/// One process: its category totals (indexed by category id) and totals.
#[derive(Debug, Clone)]
pub struct ProcessRow {
    /// The member (or result-dir process folder), with `:LINE` of the
    /// report when the member holds several processes' reports.
    pub key: String,
    /// `(process key, report line)`: rows of one member stay in log order.
    order: (String, u64),
    pub id: ProcessId,
    pub wallclock_ns: Option<i64>,
    pub device_total_ns: Option<i64>,
    pub by_category: Vec<(i64, i64)>,
    pub has_rows: bool,
}

impl ProcessRow {
    /// The row of the only report of `process_key`, or of the report at
    /// `report_line` of a member holding several.
    pub fn new(process_key: String, report_line: Option<u64>, id: ProcessId) -> ProcessRow {
        let key = match report_line {
            Some(line) => format!("{process_key}:{line}"),
            None => process_key.clone(),
        };
        ProcessRow {
            key,
            order: (process_key, report_line.unwrap_or(0)),
            id,
            wallclock_ns: None,
            device_total_ns: None,
            by_category: Vec::new(),
            has_rows: false,
        }
    }

    pub fn add(&mut self, category: usize, time_ns: i64, calls: i64) {
        if self.by_category.len() <= category {
            self.by_category.resize(category + 1, (0, 0));
        }
        let cell = &mut self.by_category[category];
        cell.0 = cell.0.saturating_add(time_ns);
        cell.1 = cell.1.saturating_add(calls);
        self.has_rows = true;
    }

    /// Takes the totals and ids of a report (result-dir processes have
    /// one per file: the largest wallclock, the summed device totals).
    pub fn absorb(&mut self, s: &ProcessReport) {
        if let Some(w) = s.wallclock_ns {
            self.wallclock_ns = Some(self.wallclock_ns.map_or(w, |old| old.max(w)));
        }
        if let Some(d) = s.device_total_ns {
            self.device_total_ns = Some(self.device_total_ns.unwrap_or(0).saturating_add(d));
        }
        if s.ccl_rank.is_some() {
            self.id.rank = s.ccl_rank;
        }
        if s.ccl_pid.is_some() {
            self.id.pid = s.ccl_pid;
        }
    }
}

/// A column of the table and its straggler statistics.
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    /// Time columns get slowest/median statistics.
    pub is_time: bool,
    pub values: Vec<Option<i64>>,
    pub median: Option<f64>,
    /// Row index of the largest value (first one on ties).
    pub slowest: Option<usize>,
    /// Row index of the smallest value: in collective (wait) time the
    /// compute straggler is the rank that waits least.
    pub fastest: Option<usize>,
}

impl Column {
    pub fn deviation_percent(&self) -> Option<f64> {
        let median = self.median?;
        let max = self.values[self.slowest?]? as f64;
        (median > 0.0).then(|| 100.0 * (max - median) / median)
    }

    pub fn fastest_deviation_percent(&self) -> Option<f64> {
        let median = self.median?;
        let min = self.values[self.fastest?]? as f64;
        (median > 0.0).then(|| 100.0 * (min - median) / median)
    }
}

#[derive(Debug, Clone)]
pub struct RankTable {
    pub rows: Vec<ProcessRow>,
    pub columns: Vec<Column>,
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    })
}

impl RankTable {
    /// Rows: processes with at least one kernel or CCL row (launcher logs
    /// holding only a wallclock are left out), ordered by rank, pid, path.
    /// Category columns follow the order of the summary JSON keys.
    pub fn build(processes: &[ProcessRow], categories: &Categories, order: &[String]) -> RankTable {
        let mut rows: Vec<ProcessRow> = processes.iter().filter(|p| p.has_rows).cloned().collect();
        rows.sort_by(|a, b| {
            (a.id.rank.is_none(), a.id.rank, a.id.pid, &a.order).cmp(&(
                b.id.rank.is_none(),
                b.id.rank,
                b.id.pid,
                &b.order,
            ))
        });
        let mut cat_order: Vec<usize> = Vec::new();
        for name in order {
            if let Some(i) = categories.names.iter().position(|c| c == name) {
                if !cat_order.contains(&i) {
                    cat_order.push(i);
                }
            }
        }
        for i in 0..categories.names.len() {
            if !cat_order.contains(&i) {
                cat_order.push(i);
            }
        }
        let mut columns = vec![
            Column {
                name: "wallclock_ns".into(),
                is_time: true,
                values: rows.iter().map(|r| r.wallclock_ns).collect(),
                median: None,
                slowest: None,
                fastest: None,
            },
            Column {
                name: "device_total_ns".into(),
                is_time: true,
                values: rows.iter().map(|r| r.device_total_ns).collect(),
                median: None,
                slowest: None,
                fastest: None,
            },
        ];
        for &c in &cat_order {
            let cell = |r: &ProcessRow| r.by_category.get(c).copied().unwrap_or((0, 0));
            columns.push(Column {
                name: format!("{}_time_ns", categories.names[c]),
                is_time: true,
                values: rows.iter().map(|r| Some(cell(r).0)).collect(),
                median: None,
                slowest: None,
                fastest: None,
            });
            columns.push(Column {
                name: format!("{}_calls", categories.names[c]),
                is_time: false,
                values: rows.iter().map(|r| Some(cell(r).1)).collect(),
                median: None,
                slowest: None,
                fastest: None,
            });
        }
        for col in &mut columns {
            if !col.is_time {
                continue;
            }
            let mut present: Vec<f64> = col.values.iter().flatten().map(|v| *v as f64).collect();
            col.median = median(&mut present);
            let mut best: Option<(usize, i64)> = None;
            for (i, v) in col.values.iter().enumerate() {
                if let Some(v) = v {
                    if best.is_none_or(|(_, b)| *v > b) {
                        best = Some((i, *v));
                    }
                }
            }
            col.slowest = best.map(|(i, _)| i);
            let mut least: Option<(usize, i64)> = None;
            for (i, v) in col.values.iter().enumerate() {
                if let Some(v) = v {
                    if least.is_none_or(|(_, b)| *v < b) {
                        least = Some((i, *v));
                    }
                }
            }
            col.fastest = least.map(|(i, _)| i);
        }
        RankTable { rows, columns }
    }

    fn slowest_in(&self, row: usize) -> String {
        if self.rows.len() < 2 {
            return String::new();
        }
        self.columns
            .iter()
            .filter(|c| c.is_time && c.slowest == Some(row))
            .map(|c| match c.deviation_percent() {
                Some(d) => format!("{}(+{d:.1}%)", c.name),
                None => c.name.clone(),
            })
            .collect::<Vec<_>>()
            .join(";")
    }
}

fn opt(v: Option<u64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// CSV: `rank,pid,member,<columns…>,slowest_in` where `slowest_in` lists the
/// time columns in which this row is the largest, with its excess over the
/// median.
pub fn render_csv(table: &RankTable) -> String {
    let written = TableWriter::new(Vec::new(), TableFormat::Csv, &per_rank_schema(table))
        .and_then(|mut w| write_table(table, &mut w).and_then(|()| w.finish()));
    String::from_utf8_lossy(&written.unwrap_or_default()).into_owned()
}

/// The columns of [`render_csv`] typed for Parquet
/// (docs/formats.md#parquet-tables): rank and pid are nullable integers,
/// every time (ns) and count column a nullable `INT64`.
pub fn per_rank_schema(table: &RankTable) -> Schema {
    let mut columns = vec![
        ParquetColumn::int64("rank").nullable(),
        ParquetColumn::int64("pid").nullable(),
        ParquetColumn::utf8("member"),
    ];
    columns.extend(
        table
            .columns
            .iter()
            .map(|c| ParquetColumn::int64(c.name.clone()).nullable()),
    );
    columns.push(ParquetColumn::utf8("slowest_in").nullable());
    Schema::new(columns)
}

/// The rows of [`render_csv`] into a CSV or Parquet table.
pub fn write_table<W: std::io::Write + Send>(
    table: &RankTable,
    w: &mut TableWriter<W>,
) -> std::io::Result<()> {
    for (i, row) in table.rows.iter().enumerate() {
        let mut rec = vec![opt(row.id.rank), opt(row.id.pid), row.key.clone()];
        rec.extend(
            table
                .columns
                .iter()
                .map(|c| c.values[i].map(|v| v.to_string()).unwrap_or_default()),
        );
        rec.push(table.slowest_in(i));
        w.write_record(&rec)?;
    }
    Ok(())
}

fn row_label(row: &ProcessRow) -> String {
    match (row.id.rank, row.id.pid) {
        (Some(r), _) => format!("rank {r}"),
        (None, Some(p)) => format!("pid {p}"),
        (None, None) => row.key.clone(),
    }
}

pub fn render_json(table: &RankTable, coverage: &Coverage) -> String {
    let rows: Vec<Value> = table
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut m = Map::new();
            m.insert("rank".into(), json!(r.id.rank));
            m.insert("pid".into(), json!(r.id.pid));
            m.insert("member".into(), json!(r.key));
            for c in &table.columns {
                m.insert(c.name.clone(), json!(c.values[i]));
            }
            Value::Object(m)
        })
        .collect();
    let mut slowest = Map::new();
    for c in table.columns.iter().filter(|c| c.is_time) {
        if let Some(i) = c.slowest {
            let r = &table.rows[i];
            slowest.insert(
                c.name.clone(),
                json!({
                    "rank": r.id.rank,
                    "pid": r.id.pid,
                    "member": r.key,
                    "value": c.values[i],
                    "median": c.median,
                    "vs_median_percent": c.deviation_percent(),
                }),
            );
        }
    }
    let mut fastest = Map::new();
    for c in table.columns.iter().filter(|c| c.is_time) {
        if let Some(i) = c.fastest {
            let r = &table.rows[i];
            fastest.insert(
                c.name.clone(),
                json!({
                    "rank": r.id.rank,
                    "pid": r.id.pid,
                    "member": r.key,
                    "value": c.values[i],
                    "vs_median_percent": c.fastest_deviation_percent(),
                }),
            );
        }
    }
    let share = (coverage.kernel_time > 0.0).then(|| coverage.default_time / coverage.kernel_time);
    let doc = json!({
        "ranks": rows,
        "slowest": slowest,
        "fastest": fastest,
        "uncategorized": {
            "category": coverage.default_category,
            "device_time_share": share,
            "names": coverage.default_names,
            "top": coverage.top.iter().map(|(n, t)| json!({"name": n, "time_ns": t})).collect::<Vec<_>>(),
        },
        "unmatched_rules": coverage.unmatched_rules.iter().map(|(k, t, c)| json!({"kind": k, "tag": t, "category": c})).collect::<Vec<_>>(),
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// Human-readable report: times in ms, `*` on the slowest value of each time
/// column, then median, slowest-vs-median and fastest-vs-median rows (a
/// compute straggler shows as the slowest in kernel time and the fastest in
/// collective time, since the others wait for it) and the coverage report.
pub fn render_table(table: &RankTable, coverage: &Coverage) -> String {
    let time_cols: Vec<&Column> = table.columns.iter().filter(|c| c.is_time).collect();
    let mut header = vec!["process".to_string()];
    header.extend(time_cols.iter().map(|c| {
        format!(
            "{} ms",
            c.name.trim_end_matches("_ns").trim_end_matches("_time")
        )
    }));
    let mut lines: Vec<Vec<String>> = vec![header];
    for (i, row) in table.rows.iter().enumerate() {
        let mut line = vec![row_label(row)];
        for c in &time_cols {
            let cell = match c.values[i] {
                Some(v) => {
                    let mark = if c.slowest == Some(i) && table.rows.len() > 1 {
                        "*"
                    } else {
                        ""
                    };
                    format!("{:.3}{mark}", v as f64 / 1e6)
                }
                None => "-".into(),
            };
            line.push(cell);
        }
        lines.push(line);
    }
    let mut med = vec!["median".to_string()];
    med.extend(time_cols.iter().map(|c| {
        c.median
            .map(|m| format!("{:.3}", m / 1e6))
            .unwrap_or_else(|| "-".into())
    }));
    lines.push(med);
    let mut slow = vec!["slowest vs median".to_string()];
    slow.extend(
        time_cols
            .iter()
            .map(|c| match (c.slowest, c.deviation_percent()) {
                (Some(i), Some(d)) => format!("{} +{d:.1}%", row_label(&table.rows[i])),
                (Some(i), None) => row_label(&table.rows[i]),
                _ => "-".into(),
            }),
    );
    lines.push(slow);
    let mut fast = vec!["fastest vs median".to_string()];
    fast.extend(
        time_cols
            .iter()
            .map(|c| match (c.fastest, c.fastest_deviation_percent()) {
                (Some(i), Some(d)) => format!("{} {d:+.1}%", row_label(&table.rows[i])),
                (Some(i), None) => row_label(&table.rows[i]),
                _ => "-".into(),
            }),
    );
    lines.push(fast);
    // Labels come from member paths: no raw control byte on the console
    // (docs/robustness.md#messages).
    for cell in lines.iter_mut().flatten() {
        *cell = unitrace_core::cli::escape_controls(cell);
    }
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|j| {
            lines
                .iter()
                .map(|l| l[j].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    // Blocks of columns that fit in TABLE_WIDTH, each repeating the
    // process column, so a run with many categories stays readable in a
    // terminal (docs/compatibility.md#summary-table-width).
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut used = widths[0];
    for (j, w) in widths.iter().enumerate().skip(1) {
        if !current.is_empty() && used + 2 + w > TABLE_WIDTH {
            blocks.push(std::mem::take(&mut current));
            used = widths[0];
        }
        current.push(j);
        used += 2 + w;
    }
    if !current.is_empty() || blocks.is_empty() {
        blocks.push(current);
    }
    let mut out = String::new();
    let n = lines.len();
    for (b, block) in blocks.iter().enumerate() {
        if b > 0 {
            out.push('\n');
        }
        let cols: Vec<usize> = std::iter::once(0).chain(block.iter().copied()).collect();
        let total: usize = cols.iter().map(|&j| widths[j]).sum::<usize>() + 2 * (cols.len() - 1);
        for (k, line) in lines.iter().enumerate() {
            if k == n - 3 || k == 1 {
                let _ = writeln!(out, "{}", "-".repeat(total));
            }
            let cells: Vec<String> = cols
                .iter()
                .map(|&j| {
                    let cell = &line[j];
                    if j == 0 {
                        format!("{cell:<w$}", w = widths[j])
                    } else {
                        format!("{cell:>w$}", w = widths[j])
                    }
                })
                .collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        }
    }
    out.push('\n');
    for line in coverage_lines(coverage) {
        for part in wrap(&line, TABLE_WIDTH) {
            let _ = writeln!(out, "{part}");
        }
    }
    out
}

/// Width of `--format table` in columns: fits a 100-column terminal.
pub const TABLE_WIDTH: usize = 100;

/// Splits `line` into pieces of at most `width` characters (continuations
/// indented by six spaces), at a space when there is one in the second
/// half of the piece, else anywhere: long kernel names keep every
/// character.
pub fn wrap(line: &str, width: usize) -> Vec<String> {
    const INDENT: &str = "      ";
    let mut out = Vec::new();
    let mut rest: Vec<char> = line.chars().collect();
    let mut first = true;
    loop {
        let room = if first { width } else { width - INDENT.len() };
        if rest.len() <= room {
            let piece: String = rest.iter().collect();
            out.push(if first {
                piece
            } else {
                format!("{INDENT}{piece}")
            });
            return out;
        }
        let cut = (room / 2..room)
            .rev()
            .find(|&i| rest[i] == ' ')
            .map_or(room, |i| i + 1);
        let piece: String = rest[..cut].iter().collect();
        let piece = piece.trim_end().to_string();
        out.push(if first {
            piece
        } else {
            format!("{INDENT}{piece}")
        });
        rest.drain(..cut);
        first = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slowest_fastest_and_median_per_column() {
        let mut cats = Categories::default();
        let gemm = cats.id("gemm");
        let ccl = cats.id("allreduce");
        let mut rows = Vec::new();
        for (rank, (g, c, wall)) in [(100, 50, 1000), (180, 10, 1010), (110, 45, 990)]
            .into_iter()
            .enumerate()
        {
            let mut row = ProcessRow::new(
                format!("output.{}.{rank}.txt", 10 + rank),
                None,
                ProcessId::from_member_path(&format!("output.{}.{rank}.txt", 10 + rank)),
            );
            row.add(gemm, g, 2);
            row.add(ccl, c, 1);
            row.wallclock_ns = Some(wall);
            rows.push(row);
        }
        // A launcher log without rows is left out.
        rows.push(ProcessRow::new(
            "output.9.txt".into(),
            None,
            ProcessId::default(),
        ));
        let order = vec!["gemm".to_string(), "allreduce".to_string()];
        let t = RankTable::build(&rows, &cats, &order);
        assert_eq!(t.rows.len(), 3);
        let col = |name: &str| t.columns.iter().find(|c| c.name == name).unwrap();
        let g = col("gemm_time_ns");
        assert_eq!(
            (g.slowest, g.fastest, g.median),
            (Some(1), Some(0), Some(110.0))
        );
        assert!((g.deviation_percent().unwrap() - 63.636).abs() < 0.01);
        let a = col("allreduce_time_ns");
        assert_eq!((a.slowest, a.fastest), (Some(0), Some(1)));
        assert!((a.fastest_deviation_percent().unwrap() + 77.777).abs() < 0.01);
        assert!(!col("gemm_calls").is_time);
        let csv = render_csv(&t);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "rank,pid,member,wallclock_ns,device_total_ns,gemm_time_ns,gemm_calls,allreduce_time_ns,allreduce_calls,slowest_in"
        );
        assert_eq!(
            lines[2],
            "1,11,output.11.1.txt,1010,,180,2,10,1,wallclock_ns(+1.0%);gemm_time_ns(+63.6%)"
        );
    }

    #[test]
    fn ids_from_paths() {
        let id = ProcessId::from_member_path("output.100030.0.txt");
        assert_eq!((id.pid, id.rank), (Some(100030), Some(0)));
        let id = ProcessId::from_member_path("logs/output.100030.12");
        assert_eq!((id.pid, id.rank), (Some(100030), Some(12)));
        let id = ProcessId::from_member_path("output.90000.txt");
        assert_eq!((id.pid, id.rank), (Some(90000), None));
        let id = ProcessId::from_member_path("res/rank_3.python.4242/device_timing.txt");
        assert_eq!((id.pid, id.rank), (Some(4242), Some(3)));
        assert_eq!(
            process_key("res/rank_3.python.4242/ccl_summary_report.txt"),
            "res/rank_3.python.4242"
        );
        let id = ProcessId::from_member_path("res/python.77/device_timing.txt");
        assert_eq!((id.pid, id.rank), (Some(77), None));
    }
}
