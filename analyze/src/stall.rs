//! Stall mode of analyze (docs/compatibility.md#analyze-stall-charts, #analyze-stall-report): stall charts per kernel run
//! and, with `-s DUMP`, the stall-to-source report built from the IGC shader
//! dump.
//!
//! Drop-in behaviour: the same kernel runs, the same messages on stdout, the
//! same report text; the report goes into the PDF as text pages after each
//! kernel's charts and, with `-r`, also into a text file. Fixed on purpose
//! (docs/compatibility.md#analyze): the dump folder is never written to
//! (docs/compatibility.md#analyze-quirk-11), the `-r` file is only created
//! when something is written to it and, like every output, appears
//! atomically at the end of a successful run (#analyze-quirk-16), errors exit non-zero (docs/compatibility.md#analyze-quirk-17), digit-only IPs are hex and
//! multi-device files work (docs/compatibility.md#analyze-quirk-5, #analyze-quirk-6, via the core stall reader).
//! Beyond the original: `--report-format json` and `--by-line [--line
//! FILE:LINE]`.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use unitrace_core::atomic::{ensure_not_input, AtomicFile};
use unitrace_core::cli::{escape_controls, warn};
use unitrace_core::demangle::Demangler;
use unitrace_core::error::InputError;
use unitrace_core::shader_dump::{summarize_names, AsmFile, AsmListing, ShaderDump};
use unitrace_core::stall_csv::{
    find_device_section, open_input, scan_file_sections, CsvReader, KernelRun, SectionInfo,
    StallColumns, StallReader, StallRow,
};
use unitrace_core::stall_report::{self, analyze_kernel, by_line};

use crate::kernel_match::{ambiguous_message, closest_names, resolve_kernel, KernelMatch};
use crate::page_links::PageLinks;
use crate::plan::{ReportFormat, ReportView, StallsPlan};
use crate::render::data::{DataLayout, DataWriter};
use crate::render::{self, Chart, Format, Page, PageSink};
use crate::stall_page::{self, PageInfo, Source};
use crate::stall_summary::StallSummary;

const TOOL: &str = "analyze";

/// Builds the stall reports of a run: the dump is listed once, symbols are
/// demangled once, and the `.asm` of consecutive runs of one kernel is read
/// and annotated once.
pub struct ReportBuilder {
    dump: ShaderDump,
    demangler: Demangler,
    listing: Option<(PathBuf, AsmListing)>,
    top: i64,
    view: ReportView,
    json: bool,
    warned_demangler: bool,
}

/// The report of one kernel in the forms the CLI writes.
pub struct KernelOutput {
    /// Text for the PDF pages and the `-r` text file.
    pub text: String,
    /// The same as JSON, only built for `--report-format json`.
    pub json: Option<stall_report::JsonValue>,
}

impl ReportBuilder {
    pub fn new(
        dump_dir: &Path,
        demangler: Option<&Path>,
        top: i64,
        view: ReportView,
        json: bool,
    ) -> Result<ReportBuilder, InputError> {
        let dump = ShaderDump::open(dump_dir)?;
        for skipped in dump.skipped() {
            unitrace_core::cli::warn("analyze", skipped);
        }
        let demangler = match demangler {
            Some(p) => Demangler::external(p),
            None => Demangler::built_in(),
        };
        Ok(ReportBuilder {
            dump,
            demangler,
            listing: None,
            top,
            view,
            json,
            warned_demangler: false,
        })
    }

    /// The report of `kernel` from its stall rows (those with a non-zero
    /// stall count, in file order). Prints the original's stdout message
    /// when the kernel has no `.asm`.
    pub fn kernel_report(
        &mut self,
        input: &Path,
        kernel: &str,
        rows: &[StallRow],
    ) -> anyhow::Result<KernelOutput> {
        let chosen = self.dump.select(kernel, &mut self.demangler).cloned();
        if let Some(reason) = self.demangler.failure() {
            if !self.warned_demangler {
                self.warned_demangler = true;
                warn(
                    TOOL,
                    format!("{reason}; using the built-in demangler instead"),
                );
            }
        }
        let Some(asm) = chosen else {
            let text = format!("Not found .asm file for {kernel}");
            println!("{}", escape_controls(&text));
            let names = self.dump.kernel_names(&mut self.demangler);
            warn(
                TOOL,
                format!(
                    "{}: no .asm file for kernel {kernel}; the dump holds {} .asm file(s) for: {}",
                    self.dump.dir.display(),
                    self.dump.files().len(),
                    summarize_names(&names, 8)
                ),
            );
            let json = self
                .json
                .then(|| stall_report::missing_asm_json(kernel, &text));
            return Ok(KernelOutput { text, json });
        };
        let (top, json, view) = (self.top, self.json, self.view.clone());
        let listing = self.load(&asm)?;
        let report = analyze_kernel(kernel, listing, rows, top);
        if !report.unknown_addresses.is_empty() {
            warn(
                TOOL,
                format!(
                    "{}: {} stalled address(es) of kernel {kernel} are not instructions of {}: {}",
                    input.display(),
                    report.unknown_addresses.len(),
                    asm.path.display(),
                    summarize_names(&report.unknown_addresses, 8)
                ),
            );
        }
        Ok(match &view {
            ReportView::Standard => KernelOutput {
                text: report.to_text(listing),
                json: json.then(|| report.to_json(listing)),
            },
            ReportView::ByLine => {
                let lines = by_line(listing, rows);
                KernelOutput {
                    text: stall_report::by_line_text(kernel, listing, &lines),
                    json: json.then(|| stall_report::by_line_json(kernel, listing, &lines, None)),
                }
            }
            ReportView::Line { file, line } => {
                let lines = by_line(listing, rows);
                let only = Some((file.as_str(), *line));
                KernelOutput {
                    text: stall_report::line_detail_text(kernel, listing, &lines, file, *line),
                    json: json.then(|| stall_report::by_line_json(kernel, listing, &lines, only)),
                }
            }
        })
    }
}

impl ReportBuilder {
    /// The annotated listing of `asm`, kept for the next call: a kernel's
    /// runs are usually consecutive, and memory stays bounded by the
    /// largest .asm rather than the dump.
    fn load(&mut self, asm: &AsmFile) -> Result<&AsmListing, InputError> {
        if self.listing.as_ref().is_none_or(|(p, _)| *p != asm.path) {
            self.listing = None;
        }
        let listing = match self.listing.take() {
            Some(cached) => cached.1,
            None => AsmListing::load(asm)?,
        };
        Ok(&self.listing.insert((asm.path.clone(), listing)).1)
    }

    /// The listing of `kernel`'s `.asm`, chosen as for the report, without
    /// the report's console messages (the HTML pages say it themselves);
    /// `None` when the dump has no `.asm` for it.
    pub fn listing_of(&mut self, kernel: &str) -> Result<Option<&AsmListing>, InputError> {
        let Some(asm) = self.dump.select(kernel, &mut self.demangler).cloned() else {
            return Ok(None);
        };
        self.load(&asm).map(Some)
    }

    /// `-n`: the stall report's entries per stall type.
    pub fn top(&self) -> i64 {
        self.top
    }

    /// The dump folder as given.
    pub fn dump_dir(&self) -> &Path {
        &self.dump.dir
    }
}

/// Where the `-r` report goes; the file is created on the first write only
/// (docs/compatibility.md#analyze-quirk-16) and committed at the end.
struct ReportFile {
    path: PathBuf,
    format: ReportFormat,
    text: Option<AtomicFile>,
    json: Vec<stall_report::JsonValue>,
}

impl ReportFile {
    fn add(&mut self, out: &mut KernelOutput) -> anyhow::Result<()> {
        match self.format {
            ReportFormat::Text => {
                if self.text.is_none() {
                    self.text = Some(
                        AtomicFile::create(&self.path)
                            .with_context(|| format!("{}: cannot write", self.path.display()))?,
                    );
                }
                if let Some(f) = self.text.as_mut() {
                    // The original `print`s the report: one more newline.
                    f.write_all(out.text.as_bytes())?;
                    f.write_all(b"\n")?;
                }
            }
            ReportFormat::Json => self.json.extend(out.json.take()),
        }
        Ok(())
    }

    /// Commits the file; false when nothing was written.
    fn commit(self) -> anyhow::Result<bool> {
        let written = match self.format {
            ReportFormat::Text => match self.text {
                Some(f) => {
                    f.commit()
                        .with_context(|| format!("{}: cannot write", self.path.display()))?;
                    true
                }
                None => false,
            },
            ReportFormat::Json => {
                if self.json.is_empty() {
                    false
                } else {
                    let bytes = stall_report::json_document(self.json);
                    unitrace_core::atomic::write_atomic(&self.path, &bytes)
                        .with_context(|| format!("{}: cannot write", self.path.display()))?;
                    true
                }
            }
        };
        Ok(written)
    }
}

/// The chart output, opened on the first page, and the `--data` file of
/// the plotted series.
struct Charts {
    path: PathBuf,
    format: Format,
    sink: Option<Box<dyn PageSink>>,
    data_path: Option<PathBuf>,
    data: Option<DataWriter>,
    /// `-o x.html`: the runs summed up for the stall dashboard page
    /// (docs/analyze.md#stall-dashboard) instead of chart and text pages.
    dashboard: Option<StallSummary>,
    /// Some run had stall events (the page is written).
    drawn: bool,
}

impl Charts {
    fn add_chart(&mut self, kernel: &str, chart: Chart) -> anyhow::Result<()> {
        if let Some(path) = &self.data_path {
            if self.data.is_none() {
                // The X of a stall chart is an instruction address:
                // column `ip`, written as 0x hex, so a reader does not
                // take the CSV's bare hex digits for decimal
                // (docs/compatibility.md#analyze-data-ip).
                self.data = Some(
                    DataWriter::create(path, DataLayout::STALLS)
                        .with_context(|| format!("{}: cannot create data file", path.display()))?,
                );
            }
        }
        if let Some(data) = self.data.as_mut() {
            let mut points = chart.clone();
            points.x_tick_labels = chart.x_tick_labels.as_ref().map(|ips| {
                ips.iter()
                    .map(|ip| match unitrace_core::stall_csv::parse_ip(ip) {
                        Some(ip) => format!("0x{ip:x}"),
                        None => ip.clone(),
                    })
                    .collect()
            });
            data.write_chart(kernel, None, &points, "")
                .with_context(|| crate::charts::data_error(self.data_path.as_deref()))?;
        }
        self.add(&Page::Chart(chart))
    }

    fn add(&mut self, page: &Page) -> anyhow::Result<()> {
        self.drawn = true;
        if self.dashboard.is_some() {
            return Ok(());
        }
        if self.sink.is_none() {
            self.sink = Some(
                render::create(&self.path, self.format)
                    .with_context(|| format!("{}: cannot write", self.path.display()))?,
            );
        }
        if let Some(sink) = self.sink.as_mut() {
            sink.add_page(page)
                .with_context(|| format!("{}: cannot write", self.path.display()))?;
        }
        Ok(())
    }

    fn finish(
        &mut self,
        input: &Path,
        builder: &mut Option<ReportBuilder>,
    ) -> anyhow::Result<bool> {
        if let Some(data) = self.data.take() {
            data.finish()
                .with_context(|| crate::charts::data_error(self.data_path.as_deref()))?;
        }
        if let Some(summary) = &self.dashboard {
            if !self.drawn {
                return Ok(false);
            }
            let html = dashboard_file(input, summary, builder)?;
            unitrace_core::atomic::write_atomic(&self.path, html.as_bytes())
                .with_context(|| format!("{}: cannot write", self.path.display()))?;
            return Ok(true);
        }
        match self.sink.take() {
            Some(sink) => {
                sink.finish()
                    .with_context(|| format!("{}: cannot write", self.path.display()))?;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// The `-o x.html` page of a stall file: the dashboard of the processed
/// runs, each kernel with its hot spots and, with `-s`, their assembly,
/// source lines and the stall report (docs/analyze.md#stall-dashboard).
fn dashboard_file(
    input: &Path,
    summary: &StallSummary,
    builder: &mut Option<ReportBuilder>,
) -> anyhow::Result<String> {
    let info = PageInfo {
        file: input.display().to_string(),
        served: false,
        top: stall_page::DEFAULT_TOP,
        dump: builder.is_some(),
        links: PageLinks::single_file(),
    };
    let mut sources = Vec::with_capacity(summary.kernels().len());
    for kernel in summary.kernels() {
        sources.push(match builder.as_mut() {
            None => Source::NoDump,
            Some(builder) => {
                let report_top = builder.top();
                let dump = builder.dump_dir().display().to_string();
                match builder.listing_of(&kernel.name)? {
                    Some(listing) => Source::Listing(stall_page::kernel_detail(
                        listing,
                        kernel,
                        &kernel.top_ips(info.top),
                        report_top,
                    )),
                    None => Source::NoAsm { dump },
                }
            }
        });
    }
    let title = format!("EU Stall Sampling - {}", render::html::title_for(input));
    Ok(stall_page::static_page(&info, &title, summary, &sources))
}

/// Everything a stall run writes to: the charts (or the dashboard), the
/// `-r` file and, with `-s`, the report builder.
struct StallOutputs<'p> {
    plan: &'p StallsPlan,
    charts: Charts,
    report_file: Option<ReportFile>,
    builder: Option<ReportBuilder>,
}

impl<'p> StallOutputs<'p> {
    /// Opens the dump folder and checks the outputs; nothing is created
    /// before the first page or report is written.
    fn open(plan: &'p StallsPlan) -> anyhow::Result<StallOutputs<'p>> {
        let draw = &plan.draw;
        // 1.7.1: the dump folder is checked before any data is read.
        let builder = match &plan.stall.shaderdump {
            Some(dir) => Some(ReportBuilder::new(
                dir,
                plan.stall.demangler.as_deref(),
                plan.stall.numtopstalls,
                plan.view.clone(),
                plan.report_format == ReportFormat::Json,
            )?),
            None => None,
        };
        if plan.report_format == ReportFormat::Json && plan.report.is_none() {
            bail!("--report-format json needs -r/--report FILE");
        }
        ensure_outputs_outside_dump(plan)?;
        let report_file = match &plan.report {
            Some(path) => {
                let mut taken = vec![draw.input.as_path(), draw.output.as_path()];
                taken.extend(draw.data.as_deref());
                ensure_not_input(path, &taken)?;
                Some(ReportFile {
                    path: path.clone(),
                    format: plan.report_format,
                    text: None,
                    json: Vec::new(),
                })
            }
            None => None,
        };
        let charts = Charts {
            path: draw.output.clone(),
            format: draw.format,
            sink: None,
            data_path: draw.data.clone(),
            data: None,
            dashboard: (draw.format == Format::Html).then(StallSummary::new),
            drawn: false,
        };
        Ok(StallOutputs {
            plan,
            charts,
            report_file,
            builder,
        })
    }

    /// Charts one kernel run and, with `-s`, adds its report; false when
    /// no row of the run has a charted stall (nothing is written then).
    fn process(&mut self, run: &KernelRun) -> anyhow::Result<bool> {
        let plan = self.plan;
        let draw = &plan.draw;
        let kept: Vec<StallRow> = run
            .rows
            .iter()
            .filter(|r| crate::stall_charts::has_charted_stall(r))
            .cloned()
            .collect();
        if kept.is_empty() {
            return Ok(false);
        }
        if let Some(summary) = self.charts.dashboard.as_mut() {
            // Every row: active cycles count in the kernel's totals.
            summary.add_run(run);
        }
        for chart in crate::stall_charts::stall_chart_pages(&draw.charts.title, &run.kernel, &kept)
        {
            self.charts.add_chart(&run.kernel, chart)?;
        }
        if let Some(builder) = self.builder.as_mut() {
            let mut out = builder.kernel_report(&draw.input, &run.kernel, &kept)?;
            if let Some(rf) = self.report_file.as_mut() {
                rf.add(&mut out)?;
            }
            for page in render::text_pages(&out.text) {
                self.charts.add(&page)?;
            }
        }
        Ok(true)
    }

    /// Writes the chart output; false when no page was drawn.
    fn finish_charts(&mut self, columns: Option<&StallColumns>) -> anyhow::Result<bool> {
        note_columns(&mut self.charts, columns);
        self.charts.finish(&self.plan.draw.input, &mut self.builder)
    }

    /// Commits the `-r` file, if anything was written to it.
    fn commit_report(self) -> anyhow::Result<()> {
        if let Some(rf) = self.report_file {
            let path = rf.path.clone();
            if rf.commit()? {
                println!("Stall report is also stored in file {}", path.display());
            }
        }
        Ok(())
    }
}

/// The files of the dump folder are inputs too: `-r dump/x.asm` must not
/// replace an assembly listing with the report
/// (docs/errors.md#inputs-never-modified).
fn ensure_outputs_outside_dump(plan: &StallsPlan) -> anyhow::Result<()> {
    let Some(dir) = &plan.stall.shaderdump else {
        return Ok(());
    };
    let dump_files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    let dump_files: Vec<&Path> = dump_files.iter().map(|p| p.as_path()).collect();
    let outputs = [
        Some(&plan.draw.output),
        plan.draw.data.as_ref(),
        plan.report.as_ref(),
    ];
    for out in outputs.into_iter().flatten() {
        ensure_not_input(out, &dump_files)?;
    }
    Ok(())
}

/// The section of `device` in the stall file, after a warning about rows
/// before the first banner.
fn device_section(input: &Path, device: i64) -> anyhow::Result<SectionInfo> {
    let sections = scan_file_sections(input)?;
    if let Some(early) = unitrace_core::csv_sections::rows_before_first_banner(&sections) {
        unitrace_core::cli::warn(
            "analyze",
            format!(
                "{}:{}: rows before the first device banner belong to no device; dropped",
                input.display(),
                early.start_line
            ),
        );
    }
    let Some(section) = find_device_section(&sections, device) else {
        bail!(InputError::at_file(
            input,
            format!("Device {device} not found in input file")
        ));
    };
    Ok(section.clone())
}

/// A reader of the kernel runs of `section`, from its start.
fn section_reader(input: &Path, section: &SectionInfo) -> Result<StallReader<File>, InputError> {
    let file = open_section(input, section.start_offset)?;
    Ok(StallReader::new(CsvReader::for_section(
        file, input, section,
    )))
}

/// Stall mode (docs/compatibility.md#analyze-stall-charts): the caller has checked the input and the
/// outputs and found that the `-d` section has a stall header.
pub fn run(plan: &StallsPlan) -> anyhow::Result<ExitCode> {
    let mut outputs = StallOutputs::open(plan)?;
    let input = plan.draw.input.as_path();
    let section = device_section(input, plan.draw.device)?;
    let mut reader = section_reader(input, &section)?;
    match &plan.draw.kernel {
        None => chart_every_run(&mut outputs, &mut reader)?,
        Some(wanted) => chart_kernel(&mut outputs, &mut reader, &section, wanted)?,
    }
    if let Some(line) = reader.csv().first_non_utf8_kernel() {
        crate::list::warn_non_utf8_kernel(input, line);
    }
    outputs.commit_report()?;
    Ok(ExitCode::SUCCESS)
}

/// 1.7.2: every run of consecutive rows with one kernel name.
fn chart_every_run(
    outputs: &mut StallOutputs,
    reader: &mut StallReader<File>,
) -> anyhow::Result<()> {
    let plan = outputs.plan;
    let draw = &plan.draw;
    let mut runs = 0usize;
    while let Some(run) = reader.next_run()? {
        runs += 1;
        if outputs.process(&run)? {
            println!("\nAnalyzed kernel {}", escape_controls(&run.kernel));
        } else {
            println!(
                "\nNo stall events for kernel {}",
                escape_controls(&run.kernel)
            );
        }
    }
    if runs == 0 {
        // A header and no row: nothing to draw, and the original's
        // silence would look like success.
        bail!(InputError::at_file(
            &draw.input,
            format!(
                "device {} has a stall header but no rows: nothing to draw",
                draw.device
            )
        ));
    }
    if outputs.finish_charts(reader.columns())? {
        println!(
            "\nStall metric charts are stored in file {} in PDF format",
            draw.output.display()
        );
    }
    Ok(())
}

/// 1.7.3: the first run of one kernel (`-k`).
fn chart_kernel(
    outputs: &mut StallOutputs,
    reader: &mut StallReader<File>,
    section: &SectionInfo,
    wanted: &str,
) -> anyhow::Result<()> {
    let plan = outputs.plan;
    let draw = &plan.draw;
    let run = find_kernel_run(&draw.input, section, reader, wanted)?;
    if outputs.process(&run)? {
        outputs.finish_charts(reader.columns())?;
        println!(
            "\nStall metric chart in file {} has been successfully generated.",
            draw.output.display()
        );
    } else {
        println!(
            "\nNo stall events for kernel {} in the input data",
            escape_controls(&run.kernel)
        );
    }
    Ok(())
}

/// The first run of `wanted`. A name that is no kernel's exact name may be
/// a unique part of one or a `/regex/`
/// (docs/compatibility.md#analyze-closest-kernel): the section is read
/// again, through a new `reader`, for the kernel it resolves to.
fn find_kernel_run(
    input: &Path,
    section: &SectionInfo,
    reader: &mut StallReader<File>,
    wanted: &str,
) -> anyhow::Result<KernelRun> {
    let mut seen: Vec<String> = Vec::new();
    while let Some(run) = reader.next_run()? {
        if run.kernel == wanted {
            return Ok(run);
        }
        if !seen.contains(&run.kernel) {
            seen.push(run.kernel.clone());
        }
    }
    match resolve_kernel(wanted, &seen)? {
        KernelMatch::Unique(name) => {
            let kernel = name.to_string();
            *reader = section_reader(input, section)?;
            while let Some(run) = reader.next_run()? {
                if run.kernel == kernel {
                    return Ok(run);
                }
            }
        }
        KernelMatch::Ambiguous(candidates) => {
            bail!(InputError::at_file(
                input,
                ambiguous_message(wanted, &candidates)
            ));
        }
        KernelMatch::NoMatch => {}
    }
    let close = closest_names(wanted, &seen, 3);
    let list: Vec<String> = close.iter().map(|k| format!("\"{k}\"")).collect();
    let hint = if list.is_empty() {
        String::new()
    } else {
        format!("; closest names: {}", list.join(", "))
    };
    bail!(InputError::at_file(
        input,
        format!("No metric data for kernel {wanted}{hint}")
    ));
}

/// The columns of the section read, for the dashboard's categories.
fn note_columns(charts: &mut Charts, columns: Option<&StallColumns>) {
    if let (Some(summary), Some(columns)) = (charts.dashboard.as_mut(), columns) {
        summary.note_columns(|t| columns.has(t));
    }
}

/// Opens the input positioned at a section start.
pub fn open_section(input: &Path, offset: u64) -> Result<File, InputError> {
    let mut file = open_input(input)?;
    file.seek(SeekFrom::Start(offset))
        .map_err(|e| InputError::io(input, &e))?;
    Ok(file)
}
