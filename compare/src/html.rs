//! `--html`: one offline page through the render crate
//! (docs/compare.md#html-page): the verdict, the total and the gate, and
//! per section the match line, a chart of the changes (candidate -
//! baseline per item, bars diverging from zero, coloured when significant)
//! and the table.

use std::io::{self, Write};

use unitrace_render::axis::linear_ticks;
use unitrace_render::html::{Cell, Document, Table};
use unitrace_render::palette::{self, Rgb};
use unitrace_render::svg::{Markup, FONT_FAMILY};

use crate::delta::{Comparison, FindingsDelta, Row, SectionDelta};
use crate::output::{
    collapse_templates, cut, findings_line, fmt_us, match_line, rule_line, runs_word,
    section_table, short_name, signed_pct, signed_us, significance_line, total_line, TOP_ROWS,
};
use crate::significance::Test;

/// Items drawn per section (the table lists as many as the console).
const BARS: usize = 15;
/// Name labels longer than this are shortened (the full name is the
/// bar's tooltip): 36 characters of 13-unit text fill the label column.
const LABEL_CHARS: usize = 36;
/// Names in the page's tables longer than this are shortened as in the
/// Markdown comment (a long template name would widen the table past the
/// page; the files and the bars' tooltips keep it whole).
const TABLE_NAME_CHARS: usize = 64;

/// Chart geometry, in SVG units (the page draws 900 units about 960 px
/// wide, so 13 units read as 14 px).
const WIDTH: f64 = 900.0;
const NAMES: f64 = 310.0;
const VALUES: f64 = 170.0;
const ROW: f64 = 24.0;
const BAR: f64 = 15.0;
const TOP: f64 = 58.0;
const FONT: f64 = 13.0;

/// A significantly slower item.
const SLOWER: Rgb = palette::TAB10[3];
/// A significantly faster item.
const FASTER: Rgb = palette::TAB10[2];
/// A change within the threshold or the noise.
const NOT_SIGNIFICANT: Rgb = Rgb(0xb4, 0xb4, 0xb4);

/// A bar's label: template arguments as `<...>`, then leading namespaces
/// dropped while too long (the last ones name the kernel), then cut.
fn label(name: &str) -> String {
    if name.chars().count() <= LABEL_CHARS {
        return name.to_string();
    }
    let mut short = collapse_templates(name);
    while short.chars().count() > LABEL_CHARS {
        // Only a `::` before any template list is a namespace separator.
        let head = short.split('<').next().unwrap_or("");
        let Some(i) = head.find("::") else { break };
        short = short[i + 2..].to_string();
    }
    cut(&short, LABEL_CHARS)
}

fn colour(r: &Row) -> Rgb {
    match (r.significant(), r.delta_us > 0.0) {
        (false, _) => NOT_SIGNIFICANT,
        (true, true) => SLOWER,
        (true, false) => FASTER,
    }
}

/// A signed time with about three significant digits, for a bar's label
/// (`+120 us`, `-4.50 us`, `+1.23 ms`).
fn compact_us(us: f64) -> String {
    let (unit, size) = axis_unit(us.abs());
    let v = us / size;
    let decimals = match v.abs() {
        a if a >= 100.0 || a == 0.0 => 0,
        a if a >= 10.0 => 1,
        _ => 2,
    };
    let sign = if v > 0.0 { "+" } else { "" };
    format!("{sign}{v:.decimals$} {unit}")
}

/// The unit of an axis whose values reach `largest` us, and its size.
fn axis_unit(largest: f64) -> (&'static str, f64) {
    if largest >= 1e6 {
        ("s", 1e6)
    } else if largest >= 1e3 {
        ("ms", 1e3)
    } else {
        ("us", 1.0)
    }
}

/// A tick label in the axis unit with the decimals its step needs, signed.
fn tick_text(v: f64, step: f64) -> String {
    // The fewest decimals that spell the step exactly (0.25: two).
    let decimals = (0..6)
        .find(|&d| {
            let scaled = step * 10f64.powi(d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(6) as usize;
    if v > 0.0 {
        format!("+{v:.decimals$}")
    } else {
        format!("{v:.decimals$}")
    }
}

/// The axis of a chart: ticks at round values of one unit around zero.
struct Axis {
    unit: &'static str,
    size: f64,
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
    step: f64,
    x0: f64,
    width: f64,
}

impl Axis {
    fn fitted(rows: &[&Row]) -> Axis {
        let ends = rows.iter().flat_map(|r| {
            let n = r.judgement.noise_us.unwrap_or(0.0);
            [r.delta_us - n, r.delta_us + n]
        });
        let (lo, hi) = ends.fold((0.0f64, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
        let (unit, size) = axis_unit(lo.abs().max(hi.abs()));
        let (mut lo, mut hi) = (lo / size, hi / size);
        if hi - lo <= 0.0 {
            (lo, hi) = (-1.0, 1.0);
        }
        // Round ends: the axis ends on a tick at or beyond the data.
        let (_, step) = linear_ticks(lo, hi, 6, false);
        let lo = (lo / step).floor() * step;
        let hi = (hi / step).ceil() * step;
        let (ticks, step) = linear_ticks(lo, hi, 6, false);
        Axis {
            unit,
            size,
            lo,
            hi,
            ticks,
            step,
            x0: NAMES,
            width: WIDTH - NAMES - VALUES,
        }
    }

    /// Page x of a value in microseconds.
    fn x(&self, us: f64) -> f64 {
        self.x0 + (us / self.size - self.lo) / (self.hi - self.lo) * self.width
    }
}

fn text(m: &mut Markup, x: f64, y: f64, anchor: &str, size: f64, body: &str) {
    m.element(
        "text",
        &[
            ("x", x.into()),
            ("y", y.into()),
            ("text-anchor", anchor.into()),
            ("font-size", size.into()),
        ],
        body,
    );
}

/// A whisker line in the frame's grey.
fn line(m: &mut Markup, x1: f64, y1: f64, x2: f64, y2: f64) {
    m.empty(
        "line",
        &[
            ("x1", x1.into()),
            ("y1", y1.into()),
            ("x2", x2.into()),
            ("y2", y2.into()),
            ("stroke", palette::FRAME.hex().into()),
            ("stroke-width", 1.5.into()),
        ],
    );
}

fn legend(m: &mut Markup, repeated: bool) {
    let mut entries = vec![
        (SLOWER, "slower (significant)"),
        (FASTER, "faster (significant)"),
        (NOT_SIGNIFICANT, "not significant"),
    ];
    let mut x = NAMES;
    for (c, name) in entries.drain(..) {
        m.empty(
            "rect",
            &[
                ("x", x.into()),
                ("y", 26.0.into()),
                ("width", 12.0.into()),
                ("height", 12.0.into()),
                ("fill", c.hex().into()),
            ],
        );
        text(m, x + 17.0, 37.0, "start", 12.0, name);
        x += 150.0;
    }
    if repeated {
        line(m, x, 32.0, x + 14.0, 32.0);
        text(m, x + 19.0, 37.0, "start", 12.0, "noise (run to run)");
    }
}

/// One bar: from zero to the delta, its noise as a whisker, its name on
/// the left, the change on the right, everything in its tooltip.
fn bar(m: &mut Markup, ax: &Axis, r: &Row, y: f64) {
    let (x0, x1) = (ax.x(0.0), ax.x(r.delta_us));
    let (left, w) = (x0.min(x1), (x1 - x0).abs().max(1.0));
    let change = r
        .change_pct
        .map_or_else(|| r.status.to_string(), signed_pct);
    let tip = format!(
        "{}\n{} -> {}: {} ({change}), {}{}",
        r.name,
        fmt_us(r.baseline_us),
        fmt_us(r.candidate_us),
        signed_us(r.delta_us),
        if r.significant() {
            "significant"
        } else {
            "not significant"
        },
        r.judgement
            .noise_us
            .map(|n| format!(", noise +-{}", fmt_us(n)))
            .unwrap_or_default()
    );
    m.open("g", &[]);
    m.element("title", &[], &tip);
    text(m, NAMES - 8.0, y + BAR - 3.0, "end", FONT, &label(&r.name));
    m.empty(
        "rect",
        &[
            ("x", left.into()),
            ("y", y.into()),
            ("width", w.into()),
            ("height", BAR.into()),
            ("fill", colour(r).hex().into()),
        ],
    );
    if let Some(n) = r.judgement.noise_us.filter(|&n| n > 0.0) {
        let mid = y + BAR / 2.0;
        let (a, b) = (ax.x(r.delta_us - n), ax.x(r.delta_us + n));
        line(m, a, mid, b, mid);
        line(m, a, mid - 4.0, a, mid + 4.0);
        line(m, b, mid - 4.0, b, mid + 4.0);
    }
    text(
        m,
        WIDTH - VALUES + 10.0,
        y + BAR - 3.0,
        "start",
        12.0,
        &format!("{} ({change})", compact_us(r.delta_us)),
    );
    m.close("g");
}

/// The changes of a section's largest rows as bars diverging from zero.
pub fn delta_svg(s: &SectionDelta, rows: &[&Row], repeated: bool) -> String {
    let ax = Axis::fitted(rows);
    let plot_bottom = TOP + rows.len() as f64 * ROW;
    let height = plot_bottom + 52.0;
    let mut m = Markup::new();
    m.open(
        "svg",
        &[
            ("xmlns", "http://www.w3.org/2000/svg".into()),
            ("width", WIDTH.into()),
            ("height", height.into()),
            ("viewBox", format!("0 0 {WIDTH} {}", height.round()).into()),
            ("font-family", FONT_FAMILY.into()),
            ("font-size", FONT.into()),
        ],
    );
    m.element(
        "text",
        &[
            ("x", 12.0.into()),
            ("y", 18.0.into()),
            ("font-size", 15.0.into()),
            ("font-weight", "bold".into()),
        ],
        &match rows.len() {
            1 => format!("{}: candidate - baseline", s.section),
            n => format!(
                "{}: candidate - baseline, the {n} largest changes",
                s.section
            ),
        },
    );
    legend(&mut m, repeated);
    for &t in &ax.ticks {
        let x = ax.x(t * ax.size);
        let zero = t == 0.0;
        m.empty(
            "line",
            &[
                ("x1", x.into()),
                ("y1", (TOP - 6.0).into()),
                ("x2", x.into()),
                ("y2", (plot_bottom + 2.0).into()),
                (
                    "stroke",
                    if zero {
                        palette::FRAME
                    } else {
                        palette::FAINT_GRID
                    }
                    .hex()
                    .into(),
                ),
                ("stroke-width", if zero { 1.5 } else { 1.0 }.into()),
            ],
        );
        text(
            &mut m,
            x,
            plot_bottom + 18.0,
            "middle",
            12.0,
            &tick_text(t, ax.step),
        );
    }
    text(
        &mut m,
        ax.x0 + ax.width / 2.0,
        plot_bottom + 40.0,
        "middle",
        FONT,
        &format!("change, {} (candidate - baseline)", ax.unit),
    );
    for (i, r) in rows.iter().enumerate() {
        bar(&mut m, &ax, r, TOP + i as f64 * ROW + (ROW - BAR) / 2.0);
    }
    m.close("svg");
    m.into_string()
}

/// The findings new, resolved and in both, with their savings on each
/// side (docs/compare.md#findings), as the console and `--markdown` list
/// them; the document escapes every text.
fn write_findings<W: Write>(doc: &mut Document<W>, f: &FindingsDelta) -> io::Result<()> {
    doc.heading(2, "findings")?;
    doc.paragraph(&format!("{}.", findings_line(f)))?;
    let savings = |v: Option<f64>| match v {
        Some(us) => Cell::Formatted(fmt_us(us)),
        None => Cell::text(""),
    };
    let mut rows = Vec::new();
    for (what, list) in [
        ("new", &f.new),
        ("resolved", &f.resolved),
        ("in both", &f.kept),
    ] {
        for r in list {
            rows.push(vec![
                Cell::text(what),
                Cell::text(r.rule.as_str()),
                Cell::text(r.rank.as_str()),
                Cell::text(short_name(&r.name, TABLE_NAME_CHARS)),
                savings(r.baseline_savings_us),
                savings(r.candidate_savings_us),
                Cell::text(r.evidence.as_str()),
            ]);
        }
    }
    if !rows.is_empty() {
        doc.table(&Table {
            header: [
                "finding",
                "rule",
                "rank",
                "name",
                "baseline saves",
                "candidate saves",
                "evidence",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        })?;
    }
    Ok(())
}

pub fn write<W: Write>(
    out: W,
    c: &Comparison,
    violations: &[String],
    gated: bool,
    roofline_svg: Option<&str>,
) -> io::Result<W> {
    let title = format!("compare: {} -> {}", c.baseline, c.candidate);
    let mut doc = Document::new(out, &title)?;
    doc.heading(1, &format!("compare: {}", c.verdict.as_str()))?;
    doc.paragraph(&format!("{}.", c.verdict_reason))?;
    doc.paragraph(&format!(
        "Baseline {} ({}), candidate {} ({}): {}, kernels matched by {}.",
        c.baseline,
        runs_word(c.baseline_runs.len()),
        c.candidate,
        runs_word(c.candidate_runs.len()),
        c.kind,
        c.level
    ))?;
    doc.paragraph(&total_line(c))?;
    doc.paragraph(&format!("{}.", rule_line(c)))?;
    if gated {
        if violations.is_empty() {
            doc.paragraph("Gate: every threshold holds.")?;
        } else {
            doc.paragraph(&format!(
                "Gate: {} threshold(s) exceeded:",
                violations.len()
            ))?;
            doc.preformatted(&violations.join("\n"))?;
        }
    }
    if let Some(svg) = roofline_svg {
        // Already markup, drawn by the roofline crate (one arrow per kernel).
        doc.figure(svg)?;
    }
    if let Some(f) = &c.findings {
        write_findings(&mut doc, f)?;
    }
    let repeated = c.significance.test != Test::ThresholdOnly;
    for s in c.sections.iter().filter(|s| !s.rows.is_empty()) {
        doc.heading(2, s.section)?;
        doc.paragraph(&match_line(s))?;
        doc.paragraph(&significance_line(s))?;
        // Rows are sorted by the size of their change: the first that did
        // not change ends the chart.
        let top: Vec<&Row> = s
            .rows
            .iter()
            .take(BARS)
            .take_while(|r| r.delta_us != 0.0)
            .collect();
        if top.is_empty() {
            doc.paragraph("No item changed.")?;
        } else {
            doc.figure(&delta_svg(s, &top, repeated))?;
        }
        let shown: Vec<&Row> = s.rows.iter().take(TOP_ROWS).collect();
        let t = section_table(s, &shown, repeated, &|n| short_name(n, TABLE_NAME_CHARS));
        doc.table(&Table {
            header: t.header,
            rows: t
                .rows
                .into_iter()
                .map(|row| {
                    row.into_iter()
                        .zip(&t.numeric)
                        .map(|(v, &num)| {
                            if num {
                                Cell::Formatted(v)
                            } else {
                                Cell::Text(v)
                            }
                        })
                        .collect()
                })
                .collect(),
        })?;
    }
    doc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_keep_the_kernel_s_own_name() {
        assert_eq!(label("gemm_kernel"), "gemm_kernel");
        assert_eq!(
            label("at::AtenIpexTypeXPU::impl::topk_impl::RadixSelectKernel<c10::Half, long, 16>"),
            "topk_impl::RadixSelectKernel<...>"
        );
        assert_eq!(
            label("at::AtenIpexTypeXPU::VectorizedElementwiseKernelFunctor<at::X<c10::Half>, 4>"),
            "VectorizedElementwiseKernelFuncto..."
        );
        let l = label(&"x".repeat(80));
        assert_eq!(l.chars().count(), LABEL_CHARS);
    }

    #[test]
    fn ticks_are_signed_with_the_decimals_of_their_step() {
        assert_eq!(tick_text(20.0, 10.0), "+20");
        assert_eq!(tick_text(-0.5, 0.25), "-0.50");
        assert_eq!(tick_text(0.0, 5.0), "0");
        assert_eq!(axis_unit(1500.0), ("ms", 1e3));
        assert_eq!(compact_us(120.0), "+120 us");
        assert_eq!(compact_us(-4.5), "-4.50 us");
        assert_eq!(compact_us(1234.0), "+1.23 ms");
        assert_eq!(compact_us(0.0), "0 us");
    }
}
