//! The real [`ChartService`]: answers chart requests from the input file,
//! through the [`FileIndex`] built once at start-up.
//!
//! * Metric sections (docs/compatibility.md#analyze-server): the rows whose `GlobalInstanceId` is
//!   the requested instance, in the first section that has it (the kernel
//!   name of the link is not used, like the original); the `-m`/`-b` pages
//!   of docs/compatibility.md#analyze-pages.
//! * Stall sections: the kernel of the link without its shape (only when
//!   it has one: [`strip_shape`]); per section its first run; the first run
//!   with stall events gives the stall charts and, with `-s`, the stall
//!   report. A run without stall events prints the original's console
//!   message and the next section is tried.
//!
//! A file may mix both kinds; the instance id is looked up first, then the
//! kernel (the original decides once for the whole file: docs/compatibility.md#analyze-quirk-8).

use std::io::Write;
use std::sync::{Arc, Mutex};

use anyhow::Context;
use unitrace_core::cli::warn;
use unitrace_core::metric_csv::{ValidityColumns, GLOBAL_INSTANCE_ID};
use unitrace_core::stall_csv::{KernelRun, StallRow};

use super::index::{FileIndex, BLOCK_BYTES};
use super::metric_dashboard::{self, percent_encode};
use super::pages::{html_bytes, metric_pages, pdf_bytes, ChartOptions, HtmlContext};
use super::request::{strip_shape, ChartRequest, PageFormat};
use super::stall_dashboard::StallDashboard;
use super::{Answer, ChartService};
pub use crate::plan::StallOptions;
use crate::plan::{ReportView, ServePlan};
use crate::render::{text_pages, Page};
use crate::stall::ReportBuilder;
use crate::stall_charts::has_charted_stall;

/// The original's answer when nothing could be drawn (docs/compatibility.md#analyze-server).
pub const NOTHING: &str = "No metric data collected or no metrics specified";

/// Answers from an indexed metric or stall CSV.
pub struct FileService {
    index: FileIndex,
    charts: ChartOptions,
    stall: StallOptions,
    reports: Mutex<Option<ReportBuilder>>,
    /// The stall views (docs/analyze.md#stall-dashboard), for files with
    /// stall sections.
    stall_dashboard: Option<StallDashboard>,
}

/// Indexes the plan's input and returns the service for it.
pub fn open(plan: &ServePlan) -> anyhow::Result<Arc<dyn ChartService>> {
    Ok(Arc::new(open_file(plan)?))
}

/// [`open`] as the concrete [`FileService`] (one per file of a
/// [`RoutedService`]).
pub fn open_file(plan: &ServePlan) -> anyhow::Result<FileService> {
    let index = FileIndex::build_with(&plan.input, BLOCK_BYTES, plan.charts.validity)?;
    let charts = plan.charts.clone();
    if let Some(line) = index.rows_before_banner() {
        crate::list::warn_rows_before_banner(&plan.input, line);
    }
    if let Some(message) = index.validity().warning(&plan.input, charts.validity) {
        warn("analyze", message);
    }
    // Early hints on stderr; requests still get the original's answers.
    if let Some(header) = index.first_metric_header() {
        if index.instance_entries() == 0 {
            warn(
                "analyze",
                format!(
                    "{}: no row has a {GLOBAL_INSTANCE_ID}: no trace link can be answered",
                    plan.input.display()
                ),
            );
        }
        if let Err(message) = metric_pages(&charts, header, &[]) {
            warn("analyze", format!("{}: {message}", plan.input.display()));
        }
    }
    let stall_dashboard = if index.has_stall_sections() {
        Some(StallDashboard::build(&plan.input)?)
    } else {
        None
    };
    let mut service = FileService::new(index, charts, plan.stall.clone());
    service.stall_dashboard = stall_dashboard;
    Ok(service)
}

impl FileService {
    pub fn new(index: FileIndex, charts: ChartOptions, stall: StallOptions) -> FileService {
        FileService {
            index,
            charts,
            stall,
            reports: Mutex::new(None),
            stall_dashboard: None,
        }
    }

    pub fn index(&self) -> &FileIndex {
        &self.index
    }

    fn metric_answer(&self, request: &ChartRequest, id: u64) -> anyhow::Result<Option<Answer>> {
        // The HTML view of a trace link is the instance's dashboard page
        // (docs/analyze.md#dashboard); the PDF stays the original's.
        if request.format == PageFormat::Html {
            let pdf = |_: &str| pdf_link(request);
            return metric_dashboard::instance_answer(
                &self.index,
                &self.charts,
                id,
                false,
                &pdf,
                None,
            );
        }
        let Some((header, mut rows)) = self.index.instance_rows(id)? else {
            return Ok(None);
        };
        // Flagged query reports are left out as in `analyze -o`
        // (docs/analyze.md#report-validity).
        if let Some(columns) = ValidityColumns::of(header) {
            let read = rows.len();
            rows.retain(|row| self.charts.validity.keeps(columns.classify_row(row)));
            if rows.is_empty() && read > 0 {
                return Ok(Some(Answer::NotFound(format!(
                    "No metric data for instance {id}: its query report is flagged and left out; --keep-invalid keeps it"
                ))));
            }
        }
        if self.charts.metrics.is_empty() {
            return Ok(Some(Answer::NotFound(NOTHING.to_string())));
        }
        let charts = match metric_pages(&self.charts, header, &rows) {
            Ok(charts) => charts,
            Err(message) => return Ok(Some(Answer::Misconfigured(message))),
        };
        if charts.is_empty() {
            return Ok(Some(Answer::NotFound(NOTHING.to_string())));
        }
        let kernel = rows.first().map(|r| r.kernel.as_str()).unwrap_or_default();
        let pages: Vec<Page> = charts.into_iter().map(Page::Chart).collect();
        let context = HtmlContext {
            title: &self.charts.title,
            kernel,
            subject: format!("instance {id} ({} samples)", rows.len()),
            pdf_link: pdf_link(request),
        };
        Ok(Some(document(request.format, &context, &pages, None)?))
    }

    fn stall_answer(&self, request: &ChartRequest) -> anyhow::Result<Answer> {
        if let Some(dump) = &self.stall.shaderdump {
            if !dump.is_dir() {
                return Ok(Answer::Misconfigured(format!(
                    "Shader dump folder {} does not exist",
                    dump.display()
                )));
            }
        }
        let kernel = strip_shape(&request.kernel);
        let runs = self.index.stall_runs(kernel)?;
        if runs.is_empty() {
            return Ok(Answer::NotFound(format!(
                "No metric data for kernel {kernel}"
            )));
        }
        // The HTML view of a stall link is the kernel's dashboard page
        // (docs/analyze.md#stall-dashboard); the PDF stays the original's.
        if request.format == PageFormat::Html {
            if let Some(dashboard) = &self.stall_dashboard {
                return Ok(dashboard.kernel(
                    kernel,
                    crate::stall_page::DEFAULT_TOP,
                    &self.stall,
                    &self.reports,
                    Some(&pdf_link(request)),
                ));
            }
        }
        for (_, run) in runs {
            let charts =
                crate::stall_charts::stall_chart_pages(&self.charts.title, kernel, &run.rows);
            if charts.is_empty() {
                // The original's console message (docs/compatibility.md#analyze-server).
                let mut out = std::io::stdout().lock();
                let _ = writeln!(
                    out,
                    "\nNo stall events for kernel {kernel} in the input data"
                );
                continue;
            }
            let report = self.stall_report(kernel, &run)?;
            let mut pages: Vec<Page> = charts.into_iter().map(Page::Chart).collect();
            let context = HtmlContext {
                title: &self.charts.title,
                kernel,
                subject: match run.device {
                    Some(device) => format!("stall samples of device {device}"),
                    None => "stall samples".to_string(),
                },
                pdf_link: pdf_link(request),
            };
            if request.format == PageFormat::Pdf {
                if let Some(report) = &report {
                    pages.extend(text_pages(report));
                }
            }
            return document(request.format, &context, &pages, report.as_deref());
        }
        Ok(Answer::NotFound(NOTHING.to_string()))
    }

    /// The stall report of one run, with `-s` (docs/compatibility.md#analyze-stall-report), built by
    /// the stall mode's [`ReportBuilder`] (created on first use, then its
    /// dump listing and demangled names are reused by later requests).
    /// Never written to `-r` (docs/compatibility.md#analyze-server).
    fn stall_report(&self, kernel: &str, run: &KernelRun) -> anyhow::Result<Option<String>> {
        let Some(dump) = &self.stall.shaderdump else {
            return Ok(None);
        };
        let stalled: Vec<StallRow> = run
            .rows
            .iter()
            .filter(|r| has_charted_stall(r))
            .cloned()
            .collect();
        // A panic in another request must not disable reports for good.
        let mut builder = self
            .reports
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if builder.is_none() {
            *builder = Some(ReportBuilder::new(
                dump,
                self.stall.demangler.as_deref(),
                self.stall.numtopstalls,
                ReportView::Standard,
                false,
            )?);
        }
        let Some(builder) = builder.as_mut() else {
            return Ok(None);
        };
        let output = builder.kernel_report(self.index.path(), kernel, &stalled)?;
        Ok(Some(output.text))
    }
}

impl ChartService for FileService {
    fn index_page(&self) -> Option<Answer> {
        // A file with metric sections: the metric dashboard; a stall-only
        // file: the stall dashboard (docs/analyze.md#stall-dashboard).
        metric_dashboard::index_answer(&self.index, &self.charts).or_else(|| {
            self.stall_dashboard
                .as_ref()
                .map(|dashboard| dashboard.index(&self.stall))
        })
    }

    fn dashboard(&self, query: &str) -> Option<Answer> {
        // A file with both kinds: `?kernel=` naming a stall kernel (and no
        // `gid`) is the stall page, the rest the metric dashboard.
        let stall_claims = self
            .stall_dashboard
            .as_ref()
            .is_some_and(|dashboard| dashboard.claims(query));
        if self.index.has_metric_sections() && !stall_claims {
            return Some(metric_dashboard::query_answer(
                &self.index,
                &self.charts,
                query,
            ));
        }
        let dashboard = self.stall_dashboard.as_ref()?;
        Some(dashboard.query(query, &self.stall, &self.reports))
    }

    fn answer(&self, request: &ChartRequest) -> Answer {
        let result = (|| -> anyhow::Result<Answer> {
            if self.index.has_metric_sections() {
                if let Some(id) = request.instance_id() {
                    if let Some(answer) = self.metric_answer(request, id)? {
                        return Ok(answer);
                    }
                }
            }
            if self.index.has_stall_sections() {
                return self.stall_answer(request);
            }
            if self.index.has_metric_sections() {
                return Ok(Answer::NotFound(unknown_instance(&self.index, request)));
            }
            Ok(Answer::NotFound(NOTHING.to_string()))
        })();
        result.unwrap_or_else(|e| {
            // The file changed or became unreadable since start-up.
            Answer::Misconfigured(format!("{e:#}"))
        })
    }
}

/// The 404 text of a link whose instance no metric section has: the
/// instance asked for and how many instances the kernel has (issue 17;
/// the original answers "No metric data collected or no metrics
/// specified", docs/compatibility.md#analyze-server-status).
fn unknown_instance(index: &FileIndex, request: &ChartRequest) -> String {
    let count = index.metric_instances_of(&request.kernel);
    format!(
        "No instance with GlobalInstanceId {} of kernel {}: the file has {count} instance{} of that kernel",
        request.instance,
        request.kernel,
        if count == 1 { "" } else { "s" }
    )
}

/// The same request as PDF (relative link from `/<kernel>/<id>?format=html`).
fn pdf_link(request: &ChartRequest) -> String {
    format!("{}?format=pdf", request.instance)
}

fn document(
    format: PageFormat,
    context: &HtmlContext<'_>,
    pages: &[Page],
    report: Option<&str>,
) -> anyhow::Result<Answer> {
    Ok(match format {
        PageFormat::Pdf => Answer::Page {
            content_type: "application/pdf",
            body: pdf_bytes(pages).context("cannot draw the PDF")?,
        },
        PageFormat::Html => Answer::Page {
            content_type: "text/html; charset=utf-8",
            body: html_bytes(context, pages, report),
        },
    })
}

/// Whose metric file a [`RoutedFile`] is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileKey {
    pub rank: Option<u32>,
    pub device: Option<u32>,
    /// `<app>.<pid>` of the process folder.
    pub process: Option<String>,
}

/// One metric file of a [`RoutedService`].
pub struct RoutedFile {
    pub key: FileKey,
    pub service: FileService,
}

/// The chart server of a `unitrace --result-dir` tree (uniview
/// `--result-dir`, docs/uniview.md#result-dir): one [`FileService`] per
/// `metrics_<n>.csv`, i.e. per (rank, device). unitrace's links carry only
/// `/<kernel>/<instance>`, and `GlobalInstanceId`s are counted per process,
/// so the ranks' ids overlap: uniview appends `?rank=R` to every link of
/// the merged trace it serves, and a request is answered by the files of
/// that rank (`?device=D` narrows to one file), the instance looked up in
/// each in (device, path) order until one has it. Traces outside
/// `rank_<r>.` folders get `?process=<app>.<pid>` instead. A link without
/// either searches every file in rank order.
pub struct RoutedService {
    files: Vec<RoutedFile>,
}

impl RoutedService {
    pub fn new(files: Vec<RoutedFile>) -> RoutedService {
        RoutedService { files }
    }

    /// Opens every plan's file, indexing them in parallel (one thread per
    /// core at most), each under its key.
    pub fn open(plans: &[(ServePlan, FileKey)]) -> anyhow::Result<RoutedService> {
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, plans.len().max(1));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<anyhow::Result<FileService>>>> =
            plans.iter().map(|_| Mutex::new(None)).collect();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((plan, _)) = plans.get(i) else {
                        break;
                    };
                    let opened = open_file(plan);
                    *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(opened);
                });
            }
        });
        let mut files = Vec::with_capacity(plans.len());
        for ((_, key), slot) in plans.iter().zip(slots) {
            let service = slot
                .into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .ok_or_else(|| anyhow::anyhow!("a metric file was not indexed"))??;
            files.push(RoutedFile {
                key: key.clone(),
                service,
            });
        }
        Ok(RoutedService::new(files))
    }

    pub fn files(&self) -> &[RoutedFile] {
        &self.files
    }
}

impl ChartService for RoutedService {
    fn answer(&self, request: &ChartRequest) -> Answer {
        let mut candidates = self
            .files
            .iter()
            .filter(|f| request.rank.is_none() || f.key.rank == request.rank)
            .filter(|f| request.device.is_none() || f.key.device == request.device)
            .filter(|f| request.process.is_none() || f.key.process == request.process)
            .peekable();
        if candidates.peek().is_none() {
            let mut what = String::new();
            if let Some(rank) = request.rank {
                what.push_str(&format!(" of rank {rank}"));
            }
            if let Some(device) = request.device {
                what.push_str(&format!(" of device {device}"));
            }
            if let Some(process) = &request.process {
                what.push_str(&format!(" of process {process}"));
            }
            return Answer::NotFound(format!("No metric file{what} in the result directory"));
        }
        let mut first_miss = None;
        for file in candidates {
            match file.service.answer(request) {
                Answer::NotFound(message) => {
                    first_miss.get_or_insert(message);
                }
                answer => return answer,
            }
        }
        Answer::NotFound(first_miss.unwrap_or_else(|| NOTHING.to_string()))
    }

    /// `/perfdashboard?gid=N&rank=R[&device=D|&process=P]`: the dashboard of
    /// the files the routing keys select (all files without keys), the first
    /// that knows the instance answering, as [`RoutedService::answer`] does.
    fn dashboard(&self, query: &str) -> Option<Answer> {
        let mut rank = None;
        let mut device = None;
        let mut process = None;
        for pair in query.split('&') {
            match pair.split_once('=') {
                Some(("rank", value)) => rank = value.parse::<u32>().ok(),
                Some(("device", value)) => device = value.parse::<u32>().ok(),
                Some(("process", value)) => process = Some(value.to_string()),
                _ => {}
            }
        }
        let mut first_miss = None;
        for file in self
            .files
            .iter()
            .filter(|f| rank.is_none() || f.key.rank == rank)
            .filter(|f| device.is_none() || f.key.device == device)
            .filter(|f| process.is_none() || f.key.process.as_deref() == process.as_deref())
        {
            match file.service.dashboard(query) {
                Some(Answer::NotFound(message)) => {
                    first_miss.get_or_insert(Answer::NotFound(message));
                }
                Some(answer) => return Some(answer),
                None => {}
            }
        }
        first_miss
    }

    fn index_page(&self) -> Option<Answer> {
        use crate::render::escape::escape_xml;
        use std::fmt::Write as _;
        let mut html = String::from(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Metric files</title>\
             <style>body{font-family:sans-serif;margin:1.5em}td,th{padding:2px 8px;text-align:left;vertical-align:top}\
             a{margin-right:.5em}</style></head><body>\n",
        );
        let mut any = false;
        for file in &self.files {
            let kernels = file.service.index().metric_kernels();
            if kernels.is_empty() {
                continue;
            }
            any = true;
            let mut query = String::new();
            if let Some(rank) = file.key.rank {
                let _ = write!(query, "&rank={rank}");
            } else if let Some(process) = &file.key.process {
                let _ = write!(query, "&process={}", percent_encode(process));
            }
            if let Some(device) = file.key.device {
                let _ = write!(query, "&device={device}");
            }
            let _ = write!(
                html,
                "<h2>{}</h2>\n<table>\n<tr><th>Kernel</th><th>Instance pages (GlobalInstanceId)</th></tr>\n",
                escape_xml(&file.service.index().path().display().to_string())
            );
            for (kernel, ids) in kernels {
                let _ = write!(html, "<tr><td>{}</td><td>", escape_xml(kernel));
                for id in ids.iter().flatten() {
                    let _ = write!(
                        html,
                        "<a href=\"/%22{}%22/{id}?format=html{query}\">{id}</a>",
                        percent_encode(kernel)
                    );
                }
                html.push_str("</td></tr>\n");
            }
            html.push_str("</table>\n");
        }
        html.push_str("</body></html>\n");
        any.then(|| Answer::Page {
            content_type: "text/html; charset=utf-8",
            body: html.into_bytes(),
        })
    }
}
