//! A report page as a new tool would write it: headings, a paragraph, a
//! table and two charts, one offline HTML file.
//!
//!     cargo run --release -p unitrace-render --example report -- report.html

use std::io;

use unitrace_core::AtomicFile;
use unitrace_render::html::{Cell, Document, Table};
use unitrace_render::{Chart, ChartKind, Page, Series};

fn main() -> io::Result<()> {
    let path = std::env::args_os()
        .nth(1)
        .unwrap_or_else(|| "report.html".into());
    let kernels = [
        ("gemm", 4.5, 120),
        ("softmax", 2.25, 40),
        ("copy", 0.5, 300),
    ];

    let mut doc = Document::new(AtomicFile::create(path.as_ref())?, "Example report")?;
    doc.heading(1, "Example report")?;
    doc.paragraph("Three kernels; times in milliseconds.")?;
    doc.table(&Table {
        header: vec!["kernel".into(), "time (ms)".into(), "calls".into()],
        rows: kernels
            .iter()
            .map(|(name, ms, calls)| {
                vec![
                    Cell::text(*name),
                    Cell::number(*ms),
                    Cell::number(f64::from(*calls)),
                ]
            })
            .collect(),
    })?;
    doc.heading(2, "Time per kernel")?;
    doc.chart(&Page::Chart(Chart {
        title_lines: vec!["Time per kernel".into()],
        x_label: "kernel".into(),
        y_label: "time (ms)".into(),
        series: vec![Series {
            name: "GPU time".into(),
            points: kernels
                .iter()
                .enumerate()
                .map(|(i, k)| (i as f64, k.1))
                .collect(),
        }],
        kind: ChartKind::Bar,
        x_tick_labels: Some(kernels.iter().map(|k| k.0.to_string()).collect()),
    }))?;
    doc.heading(2, "Calls over time")?;
    doc.chart(&Page::Chart(Chart {
        title_lines: vec!["Calls per interval".into()],
        x_label: "interval".into(),
        y_label: "calls".into(),
        series: kernels
            .iter()
            .map(|(name, _, calls)| Series {
                name: (*name).into(),
                points: (0..10)
                    .map(|t| (f64::from(t), f64::from(*calls) * (1.0 + f64::from(t % 3))))
                    .collect(),
            })
            .collect(),
        kind: ChartKind::Line,
        x_tick_labels: None,
    }))?;
    doc.finish()?.commit()
}
