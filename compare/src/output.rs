//! Writers of a comparison: console table, CSV, JSON, Markdown
//! (docs/compare.md#output). Numbers have a fixed format so outputs are
//! byte-identical run to run.

use std::io::{self, Write};

use crate::delta::{Comparison, Row, SectionDelta};
use unitrace_core::cli::escape_controls;
use unitrace_render::parquet::{Column, Schema};
use unitrace_render::table::{TableFormat, TableWriter};

/// Console and Markdown rows per section (the files hold all).
pub const TOP_ROWS: usize = 20;
/// New and vanished items named in the match line.
const TOP_NAMED: usize = 3;

/// A time in microseconds, in the unit that reads best.
pub fn fmt_us(us: f64) -> String {
    let a = us.abs();
    if a >= 1e6 {
        format!("{:.3} s", us / 1e6)
    } else if a >= 1e3 {
        format!("{:.3} ms", us / 1e3)
    } else {
        format!("{us:.3} us")
    }
}

pub fn fmt_num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

fn signed_us(us: f64) -> String {
    if us > 0.0 {
        format!("+{}", fmt_us(us))
    } else {
        fmt_us(us)
    }
}

fn opt_pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:+.1}%"))
}

fn ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}x"))
}

fn note(r: &Row) -> String {
    let mut parts = Vec::new();
    match r.status {
        "exact" => {}
        s => parts.push(s.to_string()),
    }
    if let Some(b) = &r.baseline_name {
        parts.push(format!("was {b}"));
    }
    if r.within_noise {
        parts.push("within noise".to_string());
    }
    let spread = r
        .baseline_spread_us
        .unwrap_or(0.0)
        .max(r.candidate_spread_us.unwrap_or(0.0));
    if spread > 0.0 {
        parts.push(format!("spread {}", fmt_us(spread)));
    }
    parts.join(", ")
}

/// `kernel: 40 matched (3 by shape/template), 2 new (a 1 ms, b 2 ms), 1 vanished (c 3 ms)`.
pub fn match_line(s: &SectionDelta) -> String {
    let named = |status: &str, base: bool| -> String {
        let mut rows: Vec<&Row> = s.rows.iter().filter(|r| r.status == status).collect();
        rows.sort_by(|a, b| {
            let (x, y) = if base {
                (a.baseline_us, b.baseline_us)
            } else {
                (a.candidate_us, b.candidate_us)
            };
            y.total_cmp(&x).then_with(|| a.name.cmp(&b.name))
        });
        if rows.is_empty() {
            return String::new();
        }
        let mut v: Vec<String> = rows
            .iter()
            .take(TOP_NAMED)
            .map(|r| {
                format!(
                    "{} {}",
                    r.name,
                    fmt_us(if base { r.baseline_us } else { r.candidate_us })
                )
            })
            .collect();
        if rows.len() > TOP_NAMED {
            v.push(format!("{} more", rows.len() - TOP_NAMED));
        }
        format!(" ({})", v.join(", "))
    };
    format!(
        "{}: {} matched{}, {} new{}, {} vanished{}",
        s.section,
        s.matched,
        if s.matched_loosely > 0 {
            format!(" ({} by shape/template)", s.matched_loosely)
        } else {
            String::new()
        },
        s.new,
        named("new", false),
        s.vanished,
        named("vanished", true)
    )
}

/// Console names longer than this are cut (the files keep them whole).
const CONSOLE_NAME_CHARS: usize = 80;

fn console_name(name: &str) -> String {
    // Escaped before it is measured, so that the columns stay aligned.
    let name = escape_controls(name);
    if name.chars().count() <= CONSOLE_NAME_CHARS {
        return name;
    }
    let mut s: String = name.chars().take(CONSOLE_NAME_CHARS - 3).collect();
    s.push_str("...");
    s
}

/// The console report. Names and paths come from the inputs: no line
/// carries a raw control byte (docs/robustness.md#messages).
pub fn write_console(w: &mut dyn Write, c: &Comparison) -> io::Result<()> {
    let mut text = Vec::new();
    write_console_lines(&mut text, c)?;
    for line in String::from_utf8_lossy(&text).lines() {
        writeln!(w, "{}", escape_controls(line))?;
    }
    Ok(())
}

fn write_console_lines(w: &mut dyn Write, c: &Comparison) -> io::Result<()> {
    writeln!(w, "compare ({}): {} -> {}", c.kind, c.baseline, c.candidate)?;
    let d = c.candidate_total_us - c.baseline_total_us;
    writeln!(
        w,
        "total ({}): {} -> {} ({}, {})",
        c.total_what,
        fmt_us(c.baseline_total_us),
        fmt_us(c.candidate_total_us),
        signed_us(d),
        opt_pct((c.baseline_total_us != 0.0).then(|| d / c.baseline_total_us * 100.0))
    )?;
    for s in c.sections.iter().filter(|s| !s.rows.is_empty()) {
        writeln!(w)?;
        writeln!(w, "{}", match_line(s))?;
        let header = [
            "name",
            "baseline",
            "candidate",
            "delta",
            "change",
            "ratio",
            "share",
            "note",
        ];
        let mut table: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
        for r in s.rows.iter().take(TOP_ROWS) {
            table.push(vec![
                console_name(&r.name),
                fmt_us(r.baseline_us),
                fmt_us(r.candidate_us),
                signed_us(r.delta_us),
                opt_pct(r.change_pct),
                ratio(r.ratio),
                r.share_of_change_pct
                    .map_or("-".into(), |v| format!("{v:.1}%")),
                note(r),
            ]);
        }
        let widths: Vec<usize> = (0..header.len())
            .map(|i| {
                table
                    .iter()
                    .map(|row| row[i].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in &table {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = widths[i] - cell.chars().count();
                if i == 0 || i == row.len() - 1 {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                } else {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                }
            }
            writeln!(w, "{}", line.trim_end())?;
        }
        if s.rows.len() > TOP_ROWS {
            writeln!(
                w,
                "... {} more (--csv/--json have all)",
                s.rows.len() - TOP_ROWS
            )?;
        }
        // One item (two instances, one kernel each side): its metrics too.
        if let [only] = s.rows.as_slice() {
            if !only.metrics.is_empty() {
                writeln!(w)?;
                write_metrics(w, only)?;
            }
        }
    }
    Ok(())
}

fn num(v: f64) -> String {
    // Shortest round-trip spelling: deterministic and lossless.
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

fn opt_num(v: Option<f64>) -> String {
    v.map(num).unwrap_or_default()
}

/// The metric columns of one row: metric, baseline, candidate, delta, change.
fn write_metrics(w: &mut dyn Write, r: &Row) -> io::Result<()> {
    let width = r
        .metrics
        .iter()
        .map(|m| m.0.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    writeln!(
        w,
        "{:width$}  {:>16}  {:>16}  {:>16}  {:>8}",
        "metric", "baseline", "candidate", "delta", "change"
    )?;
    for (m, b, c) in &r.metrics {
        let change = (*b != 0.0).then(|| (c - b) * 100.0 / b);
        writeln!(
            w,
            "{m:width$}  {:>16}  {:>16}  {:>16}  {:>8}",
            fmt_num(*b),
            fmt_num(*c),
            fmt_num(c - b),
            opt_pct(change)
        )?;
    }
    Ok(())
}

/// The `--csv` columns typed for Parquet (docs/formats.md#parquet-tables):
/// numbers are `DOUBLE` (empty, i.e. null, when not finite or not
/// applicable), `within_noise` a boolean (null on metric rows).
pub fn table_schema() -> Schema {
    Schema::new(vec![
        Column::utf8("section"),
        Column::utf8("name"),
        Column::utf8("baseline_name").nullable(),
        Column::utf8("status"),
        Column::utf8("metric"),
        Column::float64("baseline").nullable(),
        Column::float64("candidate").nullable(),
        Column::float64("delta").nullable(),
        Column::float64("ratio").nullable(),
        Column::float64("change_pct").nullable(),
        Column::float64("share_of_change_pct").nullable(),
        Column::float64("baseline_spread").nullable(),
        Column::float64("candidate_spread").nullable(),
        Column::bool("within_noise").nullable(),
    ])
}

/// Long format: one line per (section, item, metric); time first. CSV, or
/// Parquet for a `--csv` name ending in `.parquet`; returns `w`.
pub fn write_table<W: Write + Send>(
    w: W,
    format: TableFormat,
    c: &Comparison,
) -> anyhow::Result<W> {
    let mut out = TableWriter::new(w, format, &table_schema())?;
    for s in &c.sections {
        for r in &s.rows {
            out.write_record([
                s.section.to_string(),
                r.name.clone(),
                r.baseline_name.clone().unwrap_or_default(),
                r.status.to_string(),
                "time_us".to_string(),
                num(r.baseline_us),
                num(r.candidate_us),
                num(r.delta_us),
                opt_num(r.ratio),
                opt_num(r.change_pct),
                opt_num(r.share_of_change_pct),
                opt_num(r.baseline_spread_us),
                opt_num(r.candidate_spread_us),
                r.within_noise.to_string(),
            ])?;
            for (m, b, cv) in &r.metrics {
                let rt = (*b != 0.0).then(|| cv / b);
                out.write_record([
                    s.section.to_string(),
                    r.name.clone(),
                    r.baseline_name.clone().unwrap_or_default(),
                    r.status.to_string(),
                    m.clone(),
                    num(*b),
                    num(*cv),
                    num(cv - b),
                    opt_num(rt),
                    opt_num(rt.map(|x| (x - 1.0) * 100.0)),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                ])?;
            }
        }
    }
    Ok(out.finish()?)
}

pub fn write_json(w: &mut dyn Write, c: &Comparison, violations: &[String]) -> anyhow::Result<()> {
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        tool: &'static str,
        #[serde(flatten)]
        comparison: &'a Comparison,
        violations: &'a [String],
    }
    serde_json::to_writer_pretty(
        &mut *w,
        &Doc {
            tool: crate::TOOL,
            comparison: c,
            violations,
        },
    )?;
    w.write_all(b"\n")?;
    Ok(())
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A pull-request comment: the total, the gate's verdict, and per section
/// the match line and the top rows.
pub fn write_markdown(
    w: &mut dyn Write,
    c: &Comparison,
    violations: &[String],
    gated: bool,
) -> io::Result<()> {
    writeln!(
        w,
        "### compare ({}): `{}` -> `{}`",
        c.kind, c.baseline, c.candidate
    )?;
    writeln!(w)?;
    let d = c.candidate_total_us - c.baseline_total_us;
    writeln!(
        w,
        "**Total** ({}): {} -> {} ({}, {})",
        c.total_what,
        fmt_us(c.baseline_total_us),
        fmt_us(c.candidate_total_us),
        signed_us(d),
        opt_pct((c.baseline_total_us != 0.0).then(|| d / c.baseline_total_us * 100.0))
    )?;
    writeln!(w)?;
    if gated {
        if violations.is_empty() {
            writeln!(w, "Gate: :white_check_mark: every threshold holds")?;
        } else {
            writeln!(w, "Gate: :x: {} threshold(s) exceeded", violations.len())?;
            writeln!(w)?;
            for v in violations {
                writeln!(w, "- {}", md_escape(v))?;
            }
        }
        writeln!(w)?;
    }
    for s in c.sections.iter().filter(|s| !s.rows.is_empty()) {
        writeln!(w, "#### {}", s.section)?;
        writeln!(w)?;
        writeln!(w, "{}", md_escape(&match_line(s)))?;
        writeln!(w)?;
        writeln!(
            w,
            "| name | baseline | candidate | delta | change | ratio | share | note |"
        )?;
        writeln!(w, "|---|---:|---:|---:|---:|---:|---:|---|")?;
        for r in s.rows.iter().take(TOP_ROWS) {
            writeln!(
                w,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                md_escape(&r.name),
                fmt_us(r.baseline_us),
                fmt_us(r.candidate_us),
                signed_us(r.delta_us),
                opt_pct(r.change_pct),
                ratio(r.ratio),
                r.share_of_change_pct
                    .map_or("-".into(), |v| format!("{v:.1}%")),
                md_escape(&note(r))
            )?;
        }
        if s.rows.len() > TOP_ROWS {
            writeln!(w)?;
            writeln!(
                w,
                "{} more rows in the CSV/JSON output.",
                s.rows.len() - TOP_ROWS
            )?;
        }
        writeln!(w)?;
    }
    Ok(())
}
