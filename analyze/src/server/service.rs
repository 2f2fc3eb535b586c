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
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{bail, Context};
use unitrace_core::cli::warn;
use unitrace_core::metric_csv::{ValidityColumns, GLOBAL_INSTANCE_ID};
use unitrace_core::stall_csv::{KernelRun, StallRow};

use super::index::{FileIndex, BLOCK_BYTES};
use super::metric_dashboard;
use super::pages::{html_bytes, metric_pages, pdf_bytes, ChartOptions, HtmlContext};
use super::request::{percent_decode, route_number, strip_shape, ChartRequest, PageFormat};
use super::result_dir_index::{result_dir_html, FileContent, KernelTotal, ListedFile, PageTitle};
use super::stall_dashboard::StallDashboard;
use super::{Answer, ChartService};
use crate::charts::GPU_TIME;
use crate::page_links::PageLinks;
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
    /// The file's routing keys on a result-dir server, kept in the links
    /// of its pages (docs/uniview.md#result-dir-links).
    links: PageLinks,
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
            links: PageLinks::single_file(),
        }
    }

    /// The service of one file of a result dir: its pages link with `links`.
    pub fn with_links(mut self, links: PageLinks) -> FileService {
        self.links = links;
        self
    }

    pub fn index(&self) -> &FileIndex {
        &self.index
    }

    fn metric_answer(&self, request: &ChartRequest, id: u64) -> anyhow::Result<Option<Answer>> {
        // The HTML view of a trace link is the instance's dashboard page
        // (docs/analyze.md#dashboard); the PDF stays the original's.
        if request.format == PageFormat::Html {
            let pdf = |_: &str| self.pdf_link(request);
            return metric_dashboard::instance_answer(
                &self.index,
                &self.charts,
                id,
                false,
                &pdf,
                None,
                &self.links,
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
            // A metric this file does not have (a misspelt `-m`, or a
            // preset's metric another device model lacks): nothing to
            // show for it here, named in the text (docs/compatibility.md#analyze-server-status).
            Err(message) => return Ok(Some(Answer::NotFound(message))),
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
            pdf_link: self.pdf_link(request),
        };
        Ok(Some(document(request.format, &context, &pages, None)?))
    }

    /// The same request as PDF (relative link from
    /// `/<kernel>/<id>?format=html`), answered by this file on a result-dir
    /// server.
    fn pdf_link(&self, request: &ChartRequest) -> String {
        self.links.keep(&format!("{}?format=pdf", request.instance))
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
                    Some(&self.pdf_link(request)),
                    &self.links,
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
                pdf_link: self.pdf_link(request),
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
        metric_dashboard::index_answer(&self.index, &self.charts, &self.links).or_else(|| {
            self.stall_dashboard
                .as_ref()
                .map(|dashboard| dashboard.index(&self.stall, &self.links))
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
                &self.links,
            ));
        }
        let dashboard = self.stall_dashboard.as_ref()?;
        Some(dashboard.query(query, &self.stall, &self.reports, &self.links))
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
/// instance asked for and how many instances the kernel has (the original
/// answers "No metric data collected or no metrics specified",
/// docs/compatibility.md#analyze-server-status).
fn unknown_instance(index: &FileIndex, request: &ChartRequest) -> String {
    let count = index.metric_instances_of(&request.kernel);
    format!(
        "No instance with GlobalInstanceId {} of kernel {}: the file has {count} instance{} of that kernel",
        request.instance,
        request.kernel,
        if count == 1 { "" } else { "s" }
    )
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
    pub path: PathBuf,
    /// The file's service, or the one-line reason it is not served (the
    /// other files still are: docs/uniview.md#result-dir-index).
    pub service: Result<FileService, String>,
}

impl FileKey {
    /// The keys that route a request to this file
    /// (docs/uniview.md#result-dir): `rank=R` or `process=P`, then
    /// `device=D`.
    pub fn links(&self) -> PageLinks {
        let mut keys = Vec::new();
        if let Some(rank) = self.rank {
            keys.push(("rank".to_string(), rank.to_string()));
        } else if let Some(process) = &self.process {
            keys.push(("process".to_string(), process.clone()));
        }
        if let Some(device) = self.device {
            keys.push(("device".to_string(), device.to_string()));
        }
        PageLinks::routed(keys)
    }
}

impl RoutedFile {
    /// The query that routes a request to this file: `rank=R` or
    /// `process=P`, then `device=D`.
    pub fn route(&self) -> String {
        self.key.links().query()
    }

    fn selected(&self, keys: &RouteKeys) -> bool {
        (keys.rank.is_none() || self.key.rank == keys.rank)
            && (keys.device.is_none() || self.key.device == keys.device)
            && (keys.process.is_none() || self.key.process == keys.process)
    }
}

/// The routing keys of a request.
#[derive(Debug, Default)]
struct RouteKeys {
    rank: Option<u32>,
    device: Option<u32>,
    process: Option<String>,
}

impl RouteKeys {
    fn is_empty(&self) -> bool {
        self.rank.is_none() && self.device.is_none() && self.process.is_none()
    }

    /// ` of rank R of device D`, as the 404 texts name them.
    fn words(&self) -> String {
        let mut what = String::new();
        if let Some(rank) = self.rank {
            what.push_str(&format!(" of rank {rank}"));
        }
        if let Some(device) = self.device {
            what.push_str(&format!(" of device {device}"));
        }
        if let Some(process) = &self.process {
            what.push_str(&format!(" of process {process}"));
        }
        what
    }
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
/// either searches every file in rank order. `GET /` is the result-dir
/// index (docs/uniview.md#result-dir-index); a file that cannot be read is
/// listed there with its error and answers nothing.
pub struct RoutedService {
    files: Vec<RoutedFile>,
    /// The result directory (paths on the index are shown relative to it).
    root: Option<PathBuf>,
    title: String,
    /// The index page, made on first request (the files do not change
    /// after start-up: their indexes are built once).
    index: OnceLock<Vec<u8>>,
}

impl RoutedService {
    pub fn new(files: Vec<RoutedFile>) -> RoutedService {
        RoutedService {
            files,
            root: None,
            title: crate::args::DEFAULT_TITLE.to_string(),
            index: OnceLock::new(),
        }
    }

    /// The result directory and the dashboards' title, for the index.
    pub fn with_root(mut self, root: &Path, title: &str) -> RoutedService {
        self.root = Some(root.to_path_buf());
        self.title = title.to_string();
        self
    }

    /// Opens every plan's file, indexing them in parallel (one thread per
    /// core at most), each under its key. A file that `check` refuses or
    /// that cannot be indexed is kept with its error (the others are
    /// served); when no file can be opened, the first error is returned.
    pub fn open(
        plans: &[(ServePlan, FileKey)],
        check: &(dyn Fn(&Path) -> anyhow::Result<()> + Sync),
    ) -> anyhow::Result<RoutedService> {
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
                    let opened = check(&plan.input).and_then(|()| open_file(plan));
                    *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(opened);
                });
            }
        });
        let mut files = Vec::with_capacity(plans.len());
        for ((plan, key), slot) in plans.iter().zip(slots) {
            let service = slot
                .into_inner()
                .unwrap_or_else(|p| p.into_inner())
                .unwrap_or_else(|| Err(anyhow::anyhow!("the file was not indexed")))
                .map(|service| service.with_links(key.links()))
                .map_err(|e| one_line(&format!("{e:#}")));
            files.push(RoutedFile {
                key: key.clone(),
                path: plan.input.clone(),
                service,
            });
        }
        if files.iter().all(|f| f.service.is_err()) {
            if let Some(Err(first)) = files.first().map(|f| &f.service) {
                bail!("{first}");
            }
        }
        Ok(RoutedService::new(files))
    }

    pub fn files(&self) -> &[RoutedFile] {
        &self.files
    }

    /// The files that are not served, with their errors.
    pub fn unreadable(&self) -> impl Iterator<Item = (&RoutedFile, &str)> {
        self.files
            .iter()
            .filter_map(|f| f.service.as_ref().err().map(|e| (f, e.as_str())))
    }

    /// The index's view of every file.
    pub fn listed_files(&self) -> Vec<ListedFile> {
        self.files
            .iter()
            .map(|f| ListedFile {
                rank: f.key.rank,
                device: f.key.device,
                process: f.key.process.clone(),
                path: self.shown_path(&f.path),
                route: f.route(),
                content: match &f.service {
                    Err(error) => FileContent::Unreadable(error.clone()),
                    Ok(service) => listed_content(service.index()),
                },
            })
            .collect()
    }

    fn shown_path(&self, path: &Path) -> String {
        self.root
            .as_deref()
            .and_then(|root| path.strip_prefix(root).ok())
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// The 404 text when no served file is selected: a selected file that
    /// could not be read says why.
    fn no_file(&self, keys: &RouteKeys) -> String {
        match self
            .files
            .iter()
            .filter(|f| f.selected(keys))
            .find_map(|f| f.service.as_ref().err())
        {
            Some(error) => format!(
                "The metric file{} in the result directory cannot be read: {error}",
                keys.words()
            ),
            None => format!("No metric file{} in the result directory", keys.words()),
        }
    }
}

/// What the index says about one served file.
fn listed_content(index: &FileIndex) -> FileContent {
    let kernels = index.metric_kernels();
    if !kernels.is_empty() {
        return FileContent::Metric {
            kernels: kernels
                .iter()
                .enumerate()
                .map(|(at, (name, ids))| KernelTotal {
                    name: name.clone(),
                    instances: ids.len(),
                    gpu_ns: index.stats().total(at, GPU_TIME),
                    first_id: ids.iter().flatten().next().copied(),
                })
                .collect(),
        };
    }
    if index.has_stall_sections() {
        return FileContent::Stall {
            kernels: index.stall_kernel_count(),
        };
    }
    FileContent::Nothing
}

/// An error on one line (the index lists it in a table cell, stderr in
/// one warning).
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl ChartService for RoutedService {
    fn answer(&self, request: &ChartRequest) -> Answer {
        let keys = RouteKeys {
            rank: request.rank,
            device: request.device,
            process: request.process.clone(),
        };
        let mut candidates = self
            .files
            .iter()
            .filter(|f| f.selected(&keys))
            .filter_map(|f| f.service.as_ref().ok())
            .peekable();
        if candidates.peek().is_none() {
            return Answer::NotFound(self.no_file(&keys));
        }
        let mut first_miss = None;
        for service in candidates {
            match service.answer(request) {
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
    /// Without keys, `gid` and `kernel`: the result-dir index.
    fn dashboard(&self, query: &str) -> Option<Answer> {
        let mut keys = RouteKeys::default();
        let mut names_something = false;
        for pair in query.split('&') {
            match pair.split_once('=').unwrap_or((pair, "")) {
                // A malformed key is a 400, never "no key": that would
                // answer with the first rank's data
                // (docs/uniview.md#result-dir-links).
                ("rank", value) => match route_number("rank", value) {
                    Ok(rank) => keys.rank = Some(rank),
                    Err(message) => return Some(Answer::BadRequest(message)),
                },
                ("device", value) => match route_number("device", value) {
                    Ok(device) => keys.device = Some(device),
                    Err(message) => return Some(Answer::BadRequest(message)),
                },
                // Decoded as a form sends it (`+` is a space): the stall
                // pages' kernel form carries the keys as hidden fields
                // (docs/uniview.md#result-dir-links); our links write a
                // space as %20 and `+` as %2B.
                ("process", value) => keys.process = Some(percent_decode(&value.replace('+', " "))),
                ("gid" | "kernel", _) => names_something = true,
                _ => {}
            }
        }
        if keys.is_empty() && !names_something {
            return self.index_page();
        }
        let mut first_miss = None;
        let mut any = false;
        for file in self.files.iter().filter(|f| f.selected(&keys)) {
            let Ok(service) = &file.service else {
                continue;
            };
            any = true;
            match service.dashboard(query) {
                Some(Answer::NotFound(message)) => {
                    first_miss.get_or_insert(Answer::NotFound(message));
                }
                Some(answer) => return Some(answer),
                None => {}
            }
        }
        if !any {
            return Some(Answer::NotFound(self.no_file(&keys)));
        }
        first_miss
    }

    fn index_page(&self) -> Option<Answer> {
        let body = self.index.get_or_init(|| {
            let root = self
                .root
                .as_deref()
                .map(|r| r.display().to_string())
                .unwrap_or_default();
            result_dir_html(
                &PageTitle {
                    title: &self.title,
                    root: &root,
                },
                &self.listed_files(),
            )
            .into_bytes()
        });
        Some(Answer::Page {
            content_type: "text/html; charset=utf-8",
            body: body.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dashboard_keys_are_decoded_as_links_and_forms_send_them() {
        let service = RoutedService::new(Vec::new());
        for query in [
            "process=my%20app.12&kernel=k",
            "kernel=k&top=20&process=my+app.12",
        ] {
            assert_eq!(
                service.dashboard(query),
                Some(Answer::NotFound(
                    "No metric file of process my app.12 in the result directory".to_string()
                )),
                "{query}"
            );
        }
        assert_eq!(
            service.dashboard("process=a%2Bb.1"),
            Some(Answer::NotFound(
                "No metric file of process a+b.1 in the result directory".to_string()
            ))
        );
    }
}
