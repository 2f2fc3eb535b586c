//! Writers of a comparison: console table, CSV, JSON, Markdown
//! (docs/compare.md#output). Numbers have a fixed format so outputs are
//! byte-identical run to run; the console, Markdown and page tables show
//! each time column in one unit, named in its header.

use std::io::{self, Write};

use crate::delta::{Comparison, FindingRow, FindingsDelta, Row, SectionDelta};
use crate::significance::{Judgement, Test};
pub use crate::spell::{fmt_num, fmt_us, signed_pct, signed_us};
use unitrace_core::cli::escape_controls;
use unitrace_render::parquet::{Column, Schema};
use unitrace_render::table::{TableFormat, TableWriter};

/// Console and Markdown rows per section (the files hold all).
pub const TOP_ROWS: usize = 20;
/// New and vanished items named in the match line.
const TOP_NAMED: usize = 3;

fn opt_pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), signed_pct)
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

/// `significant: 2 slower, 1 faster; net +120.000 us (+11.8%), significant`.
pub fn significance_line(s: &SectionDelta) -> String {
    let net = s.candidate_us - s.baseline_us;
    let pct = (s.baseline_us != 0.0).then(|| net * 100.0 / s.baseline_us);
    format!(
        "significant: {} slower, {} faster; net {} ({}), {}",
        s.slower,
        s.faster,
        signed_us(net),
        opt_pct(pct),
        if s.net.significant {
            "significant"
        } else {
            "not significant"
        }
    )
}

/// The rule as one line (docs/compare.md#significance).
pub fn rule_line(c: &Comparison) -> String {
    let r = &c.significance.rule;
    let threshold = format!(
        "A change is significant above {}% and {}",
        fmt_num(r.threshold_pct),
        fmt_us(r.threshold_us).replace(".000", "")
    );
    let (nb, nc) = (c.baseline_runs.len(), c.candidate_runs.len());
    match c.significance.test {
        Test::ThresholdOnly => format!(
            "{threshold} (one run per side: no run-to-run noise is known; repeat the runs, BASE1 BASE2 ... --vs CAND1 CAND2 ..., to measure it)"
        ),
        t => format!(
            "{threshold} and beyond the run-to-run noise ({}, {nb} + {nc} runs, two-sided, alpha {})",
            t.as_str(),
            r.alpha
        ),
    }
}

pub fn runs_word(n: usize) -> String {
    if n == 1 {
        "1 run".into()
    } else {
        format!("{n} runs")
    }
}

/// `total (kernel time, all ranks): 1.020 ms -> 1.140 ms (+120.000 us, +11.8%), significant`.
pub fn total_line(c: &Comparison) -> String {
    format!(
        "total ({}): {} -> {} ({}, {}), {}",
        c.total_what,
        fmt_us(c.baseline_total_us),
        fmt_us(c.candidate_total_us),
        signed_us(c.total_delta_us()),
        opt_pct(c.total_change_pct()),
        judgement_words(&c.total)
    )
}

fn judgement_words(j: &Judgement) -> String {
    let noise = j
        .noise_us
        .map(|n| format!(", noise +-{}", fmt_us(n)))
        .unwrap_or_default();
    let word = if j.significant {
        "significant"
    } else {
        "not significant"
    };
    format!("{word}{noise}")
}

/// `verdict: worse. <reason>.` (the first line of the console and Markdown).
pub fn verdict_line(c: &Comparison) -> String {
    format!("verdict: {}. {}.", c.verdict.as_str(), c.verdict_reason)
}

/// The unit of a time column: the one that keeps its largest value under
/// 10,000.
fn time_unit(values: impl Iterator<Item = f64>) -> (&'static str, f64) {
    let largest = values
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    if largest >= 1e7 {
        ("s", 1e6)
    } else if largest >= 1e4 {
        ("ms", 1e3)
    } else {
        ("us", 1.0)
    }
}

/// A table as text cells: the console, Markdown and page tables of a
/// section.
pub struct TextTable {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Right-aligned (numbers).
    pub numeric: Vec<bool>,
    /// The unit of the delta column, and its scale from microseconds.
    pub delta_unit: (&'static str, f64),
}

/// `v` rounded to tenths, without a negative zero (`-0.0001` reads `0.0`).
fn tenths(v: f64) -> f64 {
    (v * 10.0).round() / 10.0 + 0.0
}

/// A change with 3 decimals and its sign (none for no change).
fn signed3(v: f64) -> String {
    if v == 0.0 {
        "0.000".into()
    } else {
        format!("{v:+.3}")
    }
}

/// `slower`, `faster` or `no`.
pub fn significance_word(r: &Row) -> &'static str {
    match (r.significant(), r.delta_us > 0.0) {
        (false, _) => "no",
        (true, true) => "slower",
        (true, false) => "faster",
    }
}

fn note(r: &Row) -> String {
    let mut parts = Vec::new();
    if r.status != "exact" {
        parts.push(r.status.to_string());
    }
    if let Some(b) = &r.baseline_name {
        parts.push(format!("was {b}"));
    }
    parts.join(", ")
}

/// The table of `rows` of section `s`: name, baseline, candidate, delta,
/// the noise (with repeated runs), change, ratio, share (only when the
/// section's net change is significant: else a share of noise), the
/// significance word and a note; `name` spells each name.
pub fn section_table(
    s: &SectionDelta,
    rows: &[&Row],
    repeated: bool,
    name: &dyn Fn(&str) -> String,
) -> TextTable {
    let (tu, ts) = time_unit(rows.iter().flat_map(|r| [r.baseline_us, r.candidate_us]));
    let (du, ds) = time_unit(
        rows.iter()
            .flat_map(|r| [r.delta_us, r.judgement.noise_us.unwrap_or(0.0)]),
    );
    let share = s.net.significant;
    let mut header = vec![
        "name".to_string(),
        format!("baseline_{tu}"),
        format!("candidate_{tu}"),
        format!("delta_{du}"),
    ];
    if repeated {
        header.push(format!("noise_{du}"));
    }
    header.extend(["change_%".to_string(), "ratio".to_string()]);
    if share {
        header.push("share_%".into());
    }
    // A note column without a note says nothing.
    let notes = rows.iter().any(|r| !note(r).is_empty());
    header.push("significant".to_string());
    if notes {
        header.push("note".to_string());
    }
    let numeric = header
        .iter()
        .map(|h| !matches!(h.as_str(), "name" | "significant" | "note"))
        .collect();
    let body = rows
        .iter()
        .map(|r| {
            let mut cells = vec![
                name(&r.name),
                format!("{:.3}", r.baseline_us / ts),
                format!("{:.3}", r.candidate_us / ts),
                signed3(r.delta_us / ds),
            ];
            if repeated {
                cells.push(
                    r.judgement
                        .noise_us
                        .map_or_else(|| "-".into(), |n| format!("{:.3}", n / ds)),
                );
            }
            cells.push(
                r.change_pct
                    .map_or_else(|| "-".into(), |v| format!("{:+.1}", tenths(v))),
            );
            cells.push(r.ratio.map_or_else(|| "-".into(), |v| format!("{v:.3}")));
            if share {
                cells.push(
                    r.share_of_change_pct
                        .map_or_else(|| "-".into(), |v| format!("{:.1}", tenths(v))),
                );
            }
            cells.push(significance_word(r).to_string());
            if notes {
                cells.push(note(r));
            }
            cells
        })
        .collect();
    TextTable {
        header,
        rows: body,
        numeric,
        delta_unit: (du, ds),
    }
}

/// Console names longer than this are cut (the files keep them whole).
const CONSOLE_NAME_CHARS: usize = 80;

fn console_name(name: &str) -> String {
    // Escaped before it is measured, so that the columns stay aligned.
    cut(&escape_controls(name), CONSOLE_NAME_CHARS)
}

fn write_aligned(w: &mut dyn Write, t: &TextTable) -> io::Result<()> {
    let all: Vec<&Vec<String>> = std::iter::once(&t.header).chain(&t.rows).collect();
    let widths: Vec<usize> = (0..t.header.len())
        .map(|i| all.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for row in all {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths[i] - cell.chars().count());
            if t.numeric[i] {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        writeln!(w, "{}", line.trim_end())?;
    }
    Ok(())
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

/// `findings: 1 new, 2 resolved, 3 in both` (docs/compare.md#findings).
pub fn findings_line(f: &FindingsDelta) -> String {
    format!(
        "findings: {} new, {} resolved, {} in both",
        f.new.len(),
        f.resolved.len(),
        f.kept.len()
    )
}

/// One finding as a line: rule, rank, name, savings and evidence.
pub fn finding_text(r: &FindingRow) -> String {
    let name = if r.name.is_empty() {
        String::new()
    } else {
        format!(" {}", r.name)
    };
    let savings = r
        .candidate_savings_us
        .or(r.baseline_savings_us)
        .unwrap_or(0.0);
    format!(
        "{} rank {}{name}: saves {}; {}",
        r.rule,
        r.rank,
        fmt_us(savings),
        r.evidence
    )
}

fn write_console_findings(w: &mut dyn Write, f: &FindingsDelta) -> io::Result<()> {
    writeln!(w)?;
    writeln!(w, "{}", findings_line(f))?;
    for (what, rows) in [("new", &f.new), ("resolved", &f.resolved)] {
        for r in rows {
            writeln!(w, "  {what}: {}", finding_text(r))?;
        }
    }
    Ok(())
}

fn write_console_lines(w: &mut dyn Write, c: &Comparison) -> io::Result<()> {
    writeln!(w, "{}", verdict_line(c))?;
    writeln!(
        w,
        "compare ({}): {} ({}) -> {} ({})",
        c.kind,
        c.baseline,
        runs_word(c.baseline_runs.len()),
        c.candidate,
        runs_word(c.candidate_runs.len())
    )?;
    writeln!(w, "{}", total_line(c))?;
    writeln!(w, "{}", rule_line(c))?;
    let repeated = c.significance.test != Test::ThresholdOnly;
    for s in c.sections.iter().filter(|s| !s.rows.is_empty()) {
        writeln!(w)?;
        writeln!(w, "{}", match_line(s))?;
        writeln!(w, "{}", significance_line(s))?;
        let rows: Vec<&Row> = s.rows.iter().take(TOP_ROWS).collect();
        write_aligned(w, &section_table(s, &rows, repeated, &console_name))?;
        if s.rows.len() > TOP_ROWS {
            writeln!(
                w,
                "... {} more (--csv/--json have all)",
                s.rows.len() - TOP_ROWS
            )?;
        }
        // One item (two instances, one kernel each side): its metrics too.
        if let ([_], [only]) = (c.sections.as_slice(), s.rows.as_slice()) {
            if !only.metrics.is_empty() {
                writeln!(w)?;
                write_metrics(w, only)?;
            }
        }
    }
    if let Some(f) = &c.findings {
        write_console_findings(w, f)?;
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

/// The `--csv` columns typed for Parquet (docs/formats.md#parquet-tables-compare):
/// numbers are `DOUBLE` (empty, i.e. null, when not finite or not
/// applicable), `significant` a boolean (null on metric rows).
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
        Column::float64("baseline_sd").nullable(),
        Column::float64("candidate_sd").nullable(),
        Column::float64("noise").nullable(),
        Column::float64("p_value").nullable(),
        Column::bool("significant").nullable(),
    ])
}

/// Long format: one line per (section, item, metric); time first. CSV, or
/// Parquet for a `--csv` name ending in `.parquet`; returns `w`.
pub fn write_table<W: Write + Send>(
    w: W,
    format: TableFormat,
    c: &Comparison,
) -> anyhow::Result<W> {
    let schema = table_schema();
    let mut out = TableWriter::new(w, format, &schema)?;
    for s in &c.sections {
        for r in &s.rows {
            let j = &r.judgement;
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
                opt_num(j.baseline_sd_us),
                opt_num(j.candidate_sd_us),
                opt_num(j.noise_us),
                opt_num(j.p_value),
                j.significant.to_string(),
            ])?;
            for (m, b, cv) in &r.metrics {
                let rt = (*b != 0.0).then(|| cv / b);
                let mut record = vec![
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
                ];
                record.resize(schema.columns.len(), String::new());
                out.write_record(record)?;
            }
        }
    }
    // Findings: section `findings`, the finding's key as the name, its
    // status, and its savings (docs/compare.md#findings).
    if let Some(f) = &c.findings {
        for (status, rows) in [
            ("new", &f.new),
            ("resolved", &f.resolved),
            ("kept", &f.kept),
        ] {
            for r in rows {
                let mut record = vec![
                    "findings".to_string(),
                    format!("{} rank {} {}", r.rule, r.rank, r.name)
                        .trim_end()
                        .to_string(),
                    String::new(),
                    status.to_string(),
                    "savings_us".to_string(),
                    opt_num(r.baseline_savings_us),
                    opt_num(r.candidate_savings_us),
                ];
                record.resize(schema.columns.len(), String::new());
                out.write_record(record)?;
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
    // The layout of every JSON report (docs/tracestat.md#json); the rows
    // of a comparison sit in its sections (`sections[i].rows`), two
    // levels deeper than a tracestat report's.
    unitrace_render::json::write_report(
        &mut *w,
        &Doc {
            tool: crate::TOOL,
            comparison: c,
            violations,
        },
        unitrace_render::json::TABLE_DEPTH + 2,
    )?;
    Ok(())
}

/// Text for a Markdown table cell or line: `|` would end a cell, `<` open
/// an HTML tag (`relu<float>`), `&` an entity.
fn md_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('|', "\\|")
        .replace('<', "&lt;")
}

/// Markdown names longer than this are shortened (the full name in a
/// `<details>` block of the cell).
const MD_NAME_CHARS: usize = 48;

/// A name with every template argument list as `<...>`.
pub fn collapse_templates(name: &str) -> String {
    let mut short = String::new();
    let mut depth = 0usize;
    for ch in name.chars() {
        match ch {
            '<' => {
                if depth == 0 {
                    short.push_str("<...");
                }
                depth += 1;
            }
            '>' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    short.push('>');
                }
            }
            _ if depth == 0 => short.push(ch),
            _ => {}
        }
    }
    if depth > 0 {
        short.push('>');
    }
    short
}

/// `name` cut to `max` characters, ending in `...` when cut.
pub fn cut(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_string();
    }
    let mut s: String = name.chars().take(max.saturating_sub(3)).collect();
    s.push_str("...");
    s
}

/// A long name made short: template argument lists as `<...>`, then cut.
pub fn short_name(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_string();
    }
    cut(&collapse_templates(name), max)
}

/// A name for a Markdown cell: short, with the full name in `<details>`.
fn md_name(name: &str) -> String {
    let short = short_name(name, MD_NAME_CHARS);
    if short == name {
        md_escape(name)
    } else {
        format!(
            "<details><summary>{}</summary>{}</details>",
            md_escape(&short),
            md_escape(name)
        )
    }
}

/// A pull-request comment: the verdict first, the total, the gate, and
/// per section the significant rows only.
pub fn write_markdown(
    w: &mut dyn Write,
    c: &Comparison,
    violations: &[String],
    gated: bool,
) -> io::Result<()> {
    writeln!(
        w,
        "### compare: **{}**. {}.",
        c.verdict.as_str(),
        md_escape(&c.verdict_reason)
    )?;
    writeln!(w)?;
    writeln!(
        w,
        "Baseline `{}` ({}), candidate `{}` ({}): {}, kernels matched by {}.",
        c.baseline.replace('`', "'"),
        runs_word(c.baseline_runs.len()),
        c.candidate.replace('`', "'"),
        runs_word(c.candidate_runs.len()),
        c.kind,
        c.level
    )?;
    writeln!(w)?;
    writeln!(w, "**{}**", md_escape(&total_line(c)))?;
    writeln!(w)?;
    writeln!(w, "{}.", md_escape(&rule_line(c)))?;
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
    if let Some(f) = &c.findings {
        writeln!(w, "#### findings")?;
        writeln!(w)?;
        writeln!(w, "{}", md_escape(&findings_line(f)))?;
        writeln!(w)?;
        for (what, rows) in [("new", &f.new), ("resolved", &f.resolved)] {
            for r in rows {
                writeln!(w, "- **{what}** {}", md_escape(&finding_text(r)))?;
            }
        }
        if !f.new.is_empty() || !f.resolved.is_empty() {
            writeln!(w)?;
        }
    }
    let repeated = c.significance.test != Test::ThresholdOnly;
    for s in c.sections.iter().filter(|s| !s.rows.is_empty()) {
        writeln!(w, "#### {}", s.section)?;
        writeln!(w)?;
        writeln!(w, "{}", md_escape(&match_line(s)))?;
        writeln!(w)?;
        let significant: Vec<&Row> = s.significant_rows().collect();
        if significant.is_empty() {
            writeln!(
                w,
                "No significant change ({} rows within the threshold{}).",
                s.rows.len(),
                if repeated { " or the noise" } else { "" }
            )?;
            writeln!(w)?;
            continue;
        }
        writeln!(w, "{}", md_escape(&significance_line(s)))?;
        writeln!(w)?;
        let shown: Vec<&Row> = significant.iter().copied().take(TOP_ROWS).collect();
        let t = section_table(s, &shown, repeated, &md_name);
        // The significance word is the same on every row here.
        let keep: Vec<usize> = (0..t.header.len())
            .filter(|&i| t.header[i] != "significant")
            .collect();
        let line = |cells: &[String]| {
            let v: Vec<&str> = keep.iter().map(|&i| cells[i].as_str()).collect();
            format!("| {} |", v.join(" | "))
        };
        writeln!(w, "{}", line(&t.header))?;
        let rule: Vec<String> = keep
            .iter()
            .map(|&i| if t.numeric[i] { "---:" } else { "---" }.to_string())
            .collect();
        writeln!(w, "|{}|", rule.join("|"))?;
        for row in &t.rows {
            // Names are escaped by md_name; notes may quote a name.
            let mut row = row.clone();
            if t.header.last().is_some_and(|h| h == "note") {
                let last = row.len() - 1;
                row[last] = md_escape(&row[last]);
            }
            writeln!(w, "{}", line(&row))?;
        }
        if significant.len() > TOP_ROWS {
            writeln!(w)?;
            writeln!(
                w,
                "{} more significant rows in the CSV/JSON output.",
                significant.len() - TOP_ROWS
            )?;
        }
        writeln!(w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_lose_template_arguments_first() {
        let n = "xpu::xetla::hgemm_caller<sycl::_V1::detail::half_impl::half, 32, 64, 8, 512>";
        assert_eq!(short_name(n, 48), "xpu::xetla::hgemm_caller<...>");
        assert_eq!(short_name("gemm", 48), "gemm");
        let long = "a".repeat(60);
        assert_eq!(short_name(&long, 10), "aaaaaaa...");
        assert!(md_name(n).starts_with(
            "<details><summary>xpu::xetla::hgemm_caller&lt;...></summary>xpu::xetla::hgemm_caller&lt;sycl"
        ));
    }

    #[test]
    fn time_columns_take_one_unit() {
        assert_eq!(time_unit([5.0, 9999.0].into_iter()), ("us", 1.0));
        assert_eq!(time_unit([5.0, -12_000.0].into_iter()), ("ms", 1e3));
        assert_eq!(time_unit([2e7].into_iter()), ("s", 1e6));
    }
}
