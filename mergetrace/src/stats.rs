//! `--stats`: tracestat's analyses (docs/tracestat.md#analyzers) on the
//! events the merge reads in its one pass, laid out as mergetrace's report
//! and table (docs/mergetrace.md#statistics).
//!
//! Each event of an input goes, as the merge reads it, to the trace
//! source's interpreter of its format (`timeline::EventInterpreter` for
//! JSON, `timeline::pftrace_events::PftraceEvents` for `.pftrace`) with
//! tracestat's collector as the sink ([`InputStats`]); at the input's end
//! its ranks are summarised by tracestat's analyzers and their intervals
//! dropped ([`Summarizer`]); after the merge tracestat builds its report
//! across ranks ([`MergeStats`]). What this module adds is the naming of
//! the numbers and their layout: the console report ([`write_report`])
//! and the `--stats FILE.csv|.parquet` table ([`write_table`]).
//!
//! Memory: the merge reads its inputs one after the other, so one input's
//! intervals at a time (docs/tracestat.md#memory), plus each rank's
//! summary, in which the collective calls kept for matching across ranks
//! weigh most (docs/mergetrace.md#design-choices).

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::Path;

use anyhow::Result;
use tracestat::analyzers::breakdown::BreakdownRow;
use tracestat::analyzers::clocks::Align;
use tracestat::analyzers::kernels::{KernelAgg, NO_RANGE};
use tracestat::analyzers::stragglers::{straggler_lines, StragglerRow};
use tracestat::analyzers::{self, median, RankOptions, RankSummary, Report, ReportOptions};
use tracestat::classify::Classifier;
use tracestat::ingest::{FileCollector, RankTrace};
use tracestat::time::{pct, us, Ns};
use unitrace_core::category_schema::{CategorySchema, DEFAULT_DEVICE_CATEGORY};
use unitrace_core::cli::warn;
use unitrace_core::pftrace::{Packet, PftraceSummary};
use unitrace_core::timeline::detect::{self, JsonDialect, Sniffed};
use unitrace_core::timeline::pftrace_events::PftraceEvents;
use unitrace_core::timeline::{Cut, EventInterpreter, RankRouter, TimelineRead};
use unitrace_core::trace::{Event, TraceSummary};
use unitrace_render::parquet::{Column, Schema};
use unitrace_render::table::{TableFormat, TableWriter};

const TOOL: &str = "mergetrace";

/// A top-level member of a JSON trace besides `traceEvents`: raw key and
/// value (`TraceReader::top_level_members`).
pub type TopLevelMember = (Box<[u8]>, Box<[u8]>);

/// What `--stats` was asked for.
#[derive(Debug, Default)]
pub struct StatsPlan {
    /// `--schema`: the kernel categories (docs/tracestat.md#classification).
    pub schema: Option<CategorySchema>,
    /// Its file name, as tracestat records it with the per-rank options.
    pub schema_name: Option<String>,
}

impl StatsPlan {
    /// `--stats`, with the `--schema` read from `schema_path`.
    pub fn new(schema: Option<CategorySchema>, schema_path: Option<&Path>) -> Self {
        StatsPlan {
            schema,
            schema_name: schema_path
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned()),
        }
    }

    /// tracestat's per-rank options at its defaults: none of the numbers
    /// mergetrace prints depends on them, and with them the summaries are
    /// those `tracestat` makes of the same files. Nothing it prints comes
    /// from the critical path, which is left out (`--no-critical-path`,
    /// docs/tracestat.md#no-critical-path): its graph was most of the time
    /// and memory of `--stats` beyond the merge.
    fn rank_options(&self) -> RankOptions {
        RankOptions {
            short_kernel_ns: 10_000,
            tree_depth: 0,
            heat_resolution: 1024,
            schema: self.schema_name.clone(),
            window: None,
            steps: Default::default(),
            what_if: Vec::new(),
            annotate: false,
            no_critical_path: true,
        }
    }
}

/// The interpreter of one input's format.
enum Interpreter {
    Json(EventInterpreter),
    Pftrace(PftraceEvents),
}

/// One input's events on their way to tracestat's collector.
pub struct InputStats {
    interpreter: Interpreter,
    collector: FileCollector,
    input_index: usize,
}

/// The JSON dialect of a trace, from its first bytes as the trace source
/// detects it (docs/formats.md#timeline-detection); unitrace's when the
/// file cannot be read here (the merge reports why).
pub fn json_dialect(path: &Path) -> JsonDialect {
    let mut head = Vec::with_capacity(detect::HEAD_BYTES);
    let read = std::fs::File::open(path)
        .and_then(|f| f.take(detect::HEAD_BYTES as u64).read_to_end(&mut head));
    match (read, detect::sniff(&head)) {
        (Ok(_), Sniffed::Json(dialect)) => dialect,
        _ => JsonDialect::Unitrace,
    }
}

/// How the report names a file: its name without the folders.
fn file_label(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

impl InputStats {
    /// A JSON input of the given dialect ([`json_dialect`]); `clock_base`
    /// is a Kineto trace's `baseTimeNanoseconds`, found before reading
    /// (docs/formats.md#kineto-json-time).
    pub fn json(
        path: &Path,
        input_index: usize,
        dialect: JsonDialect,
        clock_base: Option<i64>,
    ) -> Self {
        InputStats {
            interpreter: Interpreter::Json(EventInterpreter::new(path, dialect, clock_base)),
            collector: FileCollector::new(file_label(path)),
            input_index,
        }
    }

    /// A `.pftrace` input.
    pub fn pftrace(path: &Path, input_index: usize) -> Self {
        InputStats {
            interpreter: Interpreter::Pftrace(PftraceEvents::new(RankRouter::new(path))),
            collector: FileCollector::new(file_label(path)),
            input_index,
        }
    }

    /// One event of a JSON input, as the merge keeps it.
    pub fn event(&mut self, ev: &Event<'_>) -> io::Result<()> {
        match &mut self.interpreter {
            Interpreter::Json(i) => i.feed(ev, self.collector.sink()),
            Interpreter::Pftrace(_) => Ok(()),
        }
    }

    /// One packet of a `.pftrace` input (at byte `offset`), as the merge
    /// keeps it, before any edit of the merge.
    pub fn packet(&mut self, p: &Packet<'_>, offset: u64) -> io::Result<()> {
        match &mut self.interpreter {
            Interpreter::Pftrace(i) => i.feed(p, offset, self.collector.sink()),
            Interpreter::Json(_) => Ok(()),
        }
    }

    /// The end of a JSON input: its top-level members besides
    /// `traceEvents` (the run information of some writers; they only name
    /// the file's rank, so they may come after the events) and what its
    /// scan found (`None`: it stopped at an error; what came before
    /// counts).
    pub fn finish_json(
        self,
        members: &[TopLevelMember],
        summary: Option<&TraceSummary>,
    ) -> io::Result<Vec<RankTrace>> {
        let Interpreter::Json(mut interp) = self.interpreter else {
            unreachable!("finish_json on a .pftrace input");
        };
        let mut collector = self.collector;
        for (key, value) in members {
            interp.top_level(key, value, collector.sink());
        }
        interp.finish(collector.sink())?;
        let format = interp.format();
        let (names, router, run_info) = interp.into_parts();
        let read = TimelineRead {
            format,
            gzipped: false,
            names,
            router,
            run_info,
            empty: summary.is_some_and(|s| s.empty),
            cut: summary.and_then(|s| s.truncation.as_ref()).map(|t| Cut {
                dropped_bytes: t.dropped_bytes,
                line: t.line,
                partial_event: t.partial_event,
                gzip: None,
            }),
            trailing_data_line: summary
                .and_then(|s| s.trailing_data)
                .and_then(|(line, _)| line),
            events: summary.map_or(0, |s| s.events),
            warnings: Vec::new(),
        };
        Ok(collector.finish(read, self.input_index))
    }

    /// The end of a `.pftrace` input.
    pub fn finish_pftrace(self, summary: &PftraceSummary) -> io::Result<Vec<RankTrace>> {
        let Interpreter::Pftrace(mut interp) = self.interpreter else {
            unreachable!("finish_pftrace on a JSON input");
        };
        let mut collector = self.collector;
        interp.finish(collector.sink())?;
        let PftraceEvents { names, router, .. } = interp;
        let read = TimelineRead::of_pftrace(names, router, summary);
        Ok(collector.finish(read, self.input_index))
    }
}

/// Summarises each input's ranks as the merge finishes it (tracestat's
/// `analyzers::summarize`: every analysis observes the rank, the
/// intervals are dropped).
pub struct Summarizer<'a> {
    classifier: Classifier<'a>,
    options: RankOptions,
}

impl<'a> Summarizer<'a> {
    pub fn new(plan: &'a StatsPlan) -> Self {
        Summarizer {
            classifier: Classifier::new(plan.schema.as_ref()),
            options: plan.rank_options(),
        }
    }

    /// The summaries of one input's ranks; warns about the events left
    /// out (docs/tracestat.md#implausible-events).
    pub fn summarize(&mut self, traces: Vec<RankTrace>, path: &Path) -> Vec<RankSummary> {
        let summaries: Vec<RankSummary> = traces
            .into_iter()
            .map(|t| analyzers::summarize(t, &mut self.classifier, &self.options))
            .collect();
        let mut kinds: Vec<(&str, u64)> = Vec::new();
        for (kind, n) in summaries.iter().flat_map(|s| &s.parts.inputs.implausible) {
            match kinds.iter_mut().find(|k| k.0 == kind) {
                Some(k) => k.1 += n,
                None => kinds.push((kind, *n)),
            }
        }
        let total: u64 = kinds.iter().map(|k| k.1).sum();
        if total > 0 {
            let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
            warn(
                TOOL,
                format!(
                    "{}: {total} implausible event{} left out of the statistics ({}; \
                     docs/tracestat.md#implausible-events)",
                    path.display(),
                    if total == 1 { "" } else { "s" },
                    kinds.join(", ")
                ),
            );
        }
        summaries
    }
}

/// Device time of one kernel category in one rank (`--schema`).
#[derive(Debug, Clone, PartialEq)]
pub struct CategoryRow {
    pub category: String,
    pub count: u64,
    pub total_ns: Ns,
    pub max_ns: Ns,
}

/// One rank of the report, in report order.
#[derive(Debug, Clone)]
pub struct RankRow {
    pub label: String,
    pub file: String,
    pub breakdown: BreakdownRow,
    pub straggler: StragglerRow,
    /// tracestat's per-rank kernel rows, by device time, largest first.
    pub kernels: Vec<KernelAgg>,
    /// With `--schema`: the kernels' categories, largest first.
    pub categories: Vec<CategoryRow>,
}

/// Kernels no `--schema` rule matched (they count in the default
/// category `device`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Unmatched {
    pub launches: u64,
    pub total_ns: Ns,
    /// Distinct kernel names, sorted.
    pub names: Vec<String>,
}

/// The statistics of a merge: tracestat's report over every rank, and the
/// per-rank rows it is laid out from.
pub struct MergeStats {
    pub report: Report,
    pub ranks: Vec<RankRow>,
    /// `Some` with `--schema`.
    pub unmatched: Option<Unmatched>,
}

impl MergeStats {
    /// tracestat's cross-rank step (`analyzers::build`) over the ranks the
    /// merge summarised.
    pub fn build(mut summaries: Vec<RankSummary>, plan: &StatsPlan) -> MergeStats {
        tracestat::warn_duplicate_ranks("mergetrace", &summaries);
        // The report's order (by rank); the report's tables follow it.
        analyzers::sort_ranks(&mut summaries);
        let report = analyzers::build(
            summaries.clone(),
            plan.rank_options(),
            &ReportOptions {
                bins: 200,
                heat_rows: tracestat::analyzers::heatmap::MAX_HEAT_ROWS,
                align: Align::Collectives,
            },
        );
        let all_rows = report
            .out
            .breakdown
            .breakdown
            .iter()
            .filter(|b| b.device == "all");
        let mut classifier = Classifier::new(plan.schema.as_ref());
        let mut unmatched = plan.schema.as_ref().map(|_| Unmatched::default());
        let mut ranks = Vec::with_capacity(summaries.len());
        for ((s, breakdown), straggler) in summaries
            .into_iter()
            .zip(all_rows)
            .zip(&report.out.stragglers.stragglers)
        {
            let mut kernels = s.parts.kernels;
            kernels.sort_by(|a, b| {
                b.total_ns
                    .cmp(&a.total_ns)
                    .then_with(|| (&a.name, &a.category).cmp(&(&b.name, &b.category)))
            });
            let categories = match &mut unmatched {
                Some(u) => categories(&kernels, &mut classifier, u),
                None => Vec::new(),
            };
            ranks.push(RankRow {
                label: straggler.rank.clone(),
                file: s.file,
                breakdown: breakdown.clone(),
                straggler: straggler.clone(),
                kernels,
                categories,
            });
        }
        if let Some(u) = &mut unmatched {
            u.names.sort();
            u.names.dedup();
        }
        MergeStats {
            report,
            ranks,
            unmatched,
        }
    }
}

/// One rank's kernels by `--schema` category; the kernels no rule matched
/// are added to `unmatched`.
fn categories(
    kernels: &[KernelAgg],
    classifier: &mut Classifier<'_>,
    unmatched: &mut Unmatched,
) -> Vec<CategoryRow> {
    let mut rows: BTreeMap<&str, CategoryRow> = BTreeMap::new();
    for k in kernels {
        // A kernel no rule matches has no class from the schema.
        if classifier.kind(&k.name).class.is_none() {
            unmatched.launches += k.count;
            unmatched.total_ns += k.total_ns;
            unmatched.names.push(k.name.to_string());
        }
        let row = rows.entry(&k.category).or_insert_with(|| CategoryRow {
            category: k.category.to_string(),
            count: 0,
            total_ns: 0,
            max_ns: 0,
        });
        row.count += k.count;
        row.total_ns += k.total_ns;
        row.max_ns = row.max_ns.max(k.durations.max);
    }
    let mut rows: Vec<CategoryRow> = rows.into_values().collect();
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.category.cmp(&b.category))
    });
    rows
}

fn mean_us(total: Ns, count: u64) -> f64 {
    us(total) / count.max(1) as f64
}

/// Human-readable report (stdout): `top` kernels at most.
pub fn write_report(out: &mut impl Write, stats: &MergeStats, top: usize) -> Result<()> {
    let ranks = &stats.ranks;
    let med = median(
        &mut ranks
            .iter()
            .map(|r| r.straggler.gpu_time_us)
            .collect::<Vec<_>>(),
    );
    writeln!(
        out,
        "GPU time per rank ({} rank{}, median {:.3} ms):",
        ranks.len(),
        if ranks.len() == 1 { "" } else { "s" },
        med / 1e3
    )?;
    writeln!(
        out,
        "{:>6} {:>12} {:>12} {:>7} {:>9} {:>10}  file",
        "rank", "gpu_ms", "wall_ms", "busy_%", "launches", "vs_median"
    )?;
    for r in ranks {
        writeln!(
            out,
            "{:>6} {:>12.3} {:>12.3} {:>7.2} {:>9} {:>+9.1}%  {}",
            r.label,
            r.straggler.gpu_time_us / 1e3,
            r.breakdown.wall_us / 1e3,
            r.breakdown.busy_pct,
            r.breakdown.launches,
            r.straggler.vs_median_pct,
            r.file
        )?;
    }
    // tracestat's comparison with the median rank
    // (docs/tracestat.md#stragglers), word for word.
    match straggler_lines(&stats.report) {
        Some((_, median_comparison)) if !median_comparison.is_empty() => {
            writeln!(out, "straggler: {median_comparison}")?;
        }
        _ => {}
    }
    write_categories(out, stats)?;
    let kernels = &stats.report.out.kernels.kernels;
    let shown = &kernels[..kernels.len().min(top)];
    let width = shown
        .iter()
        .map(|k| k.category.len())
        .chain(["category".len()])
        .max()
        .unwrap_or(0);
    writeln!(out, "top kernels (all ranks, by device time):")?;
    writeln!(
        out,
        "{:>12} {:>7} {:>9} {:>11} {:>11}  {:<width$}  kernel  [host range]",
        "total_ms", "share_%", "count", "mean_us", "max_us", "category"
    )?;
    for k in shown {
        writeln!(
            out,
            "{:>12.3} {:>7.2} {:>9} {:>11.3} {:>11.3}  {:<width$}  {}  [{}]",
            k.total_us / 1e3,
            k.share_pct,
            k.count,
            k.mean_us,
            k.max_us,
            k.category,
            k.name,
            k.host_range
        )?;
    }
    Ok(())
}

/// `--schema` part of the report: per rank, device time per category, then
/// the share of the default category over all ranks. Nothing without a
/// schema.
fn write_categories(out: &mut impl Write, stats: &MergeStats) -> Result<()> {
    let Some(unmatched) = &stats.unmatched else {
        return Ok(());
    };
    writeln!(
        out,
        "device time by category (kernels no rule matches count as \"{DEFAULT_DEVICE_CATEGORY}\"):"
    )?;
    writeln!(
        out,
        "{:>6} {:>12} {:>7} {:>9} {:>11} {:>11}  category",
        "rank", "total_ms", "share_%", "count", "mean_us", "max_us"
    )?;
    let mut gpu_total: Ns = 0;
    let mut default_total: Ns = 0;
    for r in &stats.ranks {
        let gpu = r.kernels.iter().map(|k| k.total_ns).sum::<Ns>();
        gpu_total += gpu;
        for c in &r.categories {
            if c.category == DEFAULT_DEVICE_CATEGORY {
                default_total += c.total_ns;
            }
            writeln!(
                out,
                "{:>6} {:>12.3} {:>7.2} {:>9} {:>11.3} {:>11.3}  {}",
                r.label,
                us(c.total_ns) / 1e3,
                pct(c.total_ns as f64, gpu as f64),
                c.count,
                mean_us(c.total_ns, c.count),
                us(c.max_ns),
                c.category
            )?;
        }
    }
    let n = unmatched.names.len();
    writeln!(
        out,
        "default category \"{DEFAULT_DEVICE_CATEGORY}\": {:.2}% of device time (all ranks); \
         no rule matched {} launch{} of {} kernel name{} ({:.2}% of device time)",
        pct(default_total as f64, gpu_total as f64),
        unmatched.launches,
        if unmatched.launches == 1 { "" } else { "es" },
        n,
        if n == 1 { "" } else { "s" },
        pct(unmatched.total_ns as f64, gpu_total as f64)
    )?;
    Ok(())
}

/// The `--stats` columns as typed for Parquet (docs/formats.md#parquet-tables-mergetrace):
/// `rank` is a string because a file without a rank is labelled `#N`;
/// fields a row kind leaves empty are nulls.
pub fn stats_schema() -> Schema {
    Schema::new(vec![
        Column::utf8("row"),
        Column::utf8("rank"),
        Column::utf8("file"),
        Column::utf8("kernel").nullable(),
        Column::utf8("category").nullable(),
        Column::int64("count"),
        Column::float64("total_us"),
        Column::float64("mean_us").nullable(),
        Column::float64("max_us").nullable(),
        Column::float64("gpu_share_pct").nullable(),
        Column::float64("wall_us").nullable(),
        Column::float64("gpu_busy_pct").nullable(),
        Column::float64("vs_median_pct").nullable(),
        Column::utf8("host_range").nullable(),
        Column::float64("host_range_share_pct").nullable(),
    ])
}

/// The `--stats` table as CSV or Parquet into `out`, which is returned:
/// per rank a `rank` row, then (with `--schema`) its `category` rows, then
/// its `kernel` rows.
pub fn write_table<W: Write + Send>(out: W, format: TableFormat, stats: &MergeStats) -> Result<W> {
    let mut w = TableWriter::new(out, format, &stats_schema())?;
    let f3 = |v: f64| format!("{v:.3}");
    let f2 = |v: f64| format!("{v:.2}");
    for r in &stats.ranks {
        let gpu = r.straggler.gpu_time_us;
        w.write_record([
            "rank",
            &r.label,
            &r.file,
            "",
            "",
            &r.breakdown.launches.to_string(),
            &f3(gpu),
            "",
            "",
            "",
            &f3(r.breakdown.wall_us),
            &f2(r.breakdown.busy_pct),
            &format!("{:.1}", r.straggler.vs_median_pct),
            "",
            "",
        ])?;
        for c in &r.categories {
            w.write_record([
                "category",
                &r.label,
                &r.file,
                "",
                &c.category,
                &c.count.to_string(),
                &f3(us(c.total_ns)),
                &f3(mean_us(c.total_ns, c.count)),
                &f3(us(c.max_ns)),
                &f2(pct(us(c.total_ns), gpu)),
                "",
                "",
                "",
                "",
                "",
            ])?;
        }
        for k in &r.kernels {
            let range = if k.host_range.is_empty() {
                NO_RANGE
            } else {
                &k.host_range
            };
            w.write_record([
                "kernel",
                &r.label,
                &r.file,
                &k.name,
                &k.category,
                &k.count.to_string(),
                &f3(us(k.total_ns)),
                &f3(mean_us(k.total_ns, k.count)),
                &f3(us(k.durations.max)),
                &f2(pct(us(k.total_ns), gpu)),
                "",
                "",
                "",
                range,
                &f2(pct(k.host_range_ns as f64, k.total_ns as f64)),
            ])?;
        }
    }
    Ok(w.finish()?)
}
