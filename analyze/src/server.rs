//! `analyze -q` / `analyze -p`: the chart server behind the links unitrace
//! writes into kernel events of a Perfetto trace (docs/compatibility.md#analyze-server, #analyze-input-checks;
//! docs/formats.md#trace-json-metrics-link).
//!
//! Differences from the original, all deliberate:
//! * several requests are served at once (bounded: see [`http::Limits`]);
//! * the input is indexed once at start-up and a request reads only its
//!   instance's bytes (see [`service`]);
//! * errors carry real status codes: `Invalid` → 400, unknown instance or
//!   kernel → 404, a server-side configuration problem (misspelt `-m` name,
//!   missing shader dump folder) → 500, non-GET methods → 405; bodies keep
//!   the original's text;
//! * `?format=html` answers an HTML page with inline SVG charts (and the
//!   stall report for stall files);
//! * `--port` (default 8000; 0 = any free port), and the address served is
//!   printed.

pub mod http;
pub mod index;
pub mod metric_dashboard;
pub mod pages;
pub mod request;
pub mod result_dir_index;
pub mod service;
pub mod stall_dashboard;
pub mod tls;
pub mod trace;
pub mod uniview;

use std::future::Future;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context};

use crate::plan::ServePlan;
use http::{Handler, Limits, Reply, RequestHead};
use request::{parse_target, ChartRequest, Rejection};

/// The answer of a [`ChartService`] to one [`ChartRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A document: `application/pdf` or `text/html`.
    Page {
        content_type: &'static str,
        body: Vec<u8>,
    },
    /// Nothing to show for this kernel/instance (404, original's text).
    NotFound(String),
    /// The server's own options are wrong (500, original's text), e.g. an
    /// `-m` name the file does not have.
    Misconfigured(String),
    /// A malformed query parameter (400), e.g. `?top=x`.
    BadRequest(String),
}

/// Turns a chart request into a page. The real services live in
/// [`service`]; tests use fakes.
pub trait ChartService: Send + Sync + 'static {
    fn answer(&self, request: &ChartRequest) -> Answer;
    /// The page of `GET /` (kernels and their instances); `None` keeps the
    /// original's `Invalid`.
    fn index_page(&self) -> Option<Answer> {
        None
    }
    /// The page of `GET /perfdashboard?QUERY` (perfdashboard's URL);
    /// `None` keeps the original's `Invalid`.
    fn dashboard(&self, _query: &str) -> Option<Answer> {
        None
    }
}

/// The HTTP face of a [`ChartService`]: method check, URL decoding, status
/// codes.
pub struct ChartHandler {
    service: Arc<dyn ChartService>,
}

impl ChartHandler {
    pub fn new(service: Arc<dyn ChartService>) -> ChartHandler {
        ChartHandler { service }
    }
}

impl Handler for ChartHandler {
    fn handle(&self, head: &RequestHead) -> Reply {
        if head.method != "GET" && head.method != "HEAD" {
            return Reply::method_not_allowed();
        }
        let path = head.target.split('?').next().unwrap_or_default();
        if path == "/" {
            if let Some(Answer::Page { content_type, body }) = self.service.index_page() {
                return Reply::document(content_type, body)
                    .with_header("cache-control", "no-cache");
            }
        }
        if path == "/perfdashboard" {
            let query = head.target.split_once('?').map_or("", |(_, q)| q);
            let query = query.split('#').next().unwrap_or_default();
            // Every server refuses a malformed routing key, as for chart
            // links (docs/uniview.md#result-dir-links).
            if let Err(message) = request::check_route_keys(query) {
                return Reply::text(400, message).with_header("cache-control", "no-cache");
            }
            if let Some(answer) = self.service.dashboard(query) {
                return reply_of(answer).with_header("cache-control", "no-cache");
            }
        }
        let request = match parse_target(&head.target) {
            Ok(request) => request,
            Err(rejection @ Rejection::Favicon) => return Reply::text(404, rejection.to_string()),
            Err(rejection) => return Reply::text(400, rejection.to_string()),
        };
        let reply = reply_of(self.service.answer(&request));
        // Pages are computed from a file that may be re-recorded between
        // runs: never let a browser reuse a stale chart.
        reply.with_header("cache-control", "no-cache")
    }
}

/// The HTTP reply of an [`Answer`].
fn reply_of(answer: Answer) -> Reply {
    match answer {
        Answer::Page { content_type, body } => Reply::document(content_type, body),
        Answer::NotFound(message) => Reply::text(404, message),
        Answer::Misconfigured(message) => Reply::text(500, message),
        Answer::BadRequest(message) => Reply::text(400, message),
    }
}

/// A chart server ready to run: socket bound, TLS set up, file indexed.
pub struct ChartServer {
    listener: std::net::TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    service: Arc<dyn ChartService>,
    limits: Limits,
}

impl ChartServer {
    /// The URL clients reach the server at (with the real port when
    /// `--port 0` was given).
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        match self.listener.local_addr() {
            Ok(addr) => format!("{scheme}://{addr}/"),
            Err(_) => format!("{scheme}://127.0.0.1/"),
        }
    }

    /// Serves until `stop` completes.
    pub async fn serve(self, stop: impl Future<Output = ()>) -> std::io::Result<()> {
        let handler: Arc<dyn Handler> = Arc::new(ChartHandler::new(self.service));
        http::serve(self.listener, self.tls, handler, self.limits, stop).await
    }
}

/// Prints the original's notices to `out` (docs/compatibility.md#analyze-server), indexes the
/// input, binds the port and sets up TLS. The input has passed
/// [`check_input`] and the plan's options were checked when it was made.
pub fn prepare(plan: &ServePlan, out: &mut dyn Write) -> anyhow::Result<ChartServer> {
    let _ = writeln!(out, "No output to file");
    let _ = writeln!(
        out,
        "Options -o/--output, -r/--report, -k/--kernel, -i/--instance and -d/--device are ignored if they are present"
    );
    let tls = match &plan.tls {
        Some(files) => Some(tls::server_config(
            files.certificate.as_deref(),
            files.key.as_deref(),
            out,
        )?),
        None => None,
    };
    let service = service::open(plan)?;
    let listener = http::bind_loopback(plan.port)
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", plan.port))?;
    Ok(ChartServer {
        listener,
        tls,
        service,
        limits: Limits::default(),
    })
}

/// docs/compatibility.md#analyze-input-checks for the server, with the original's messages
/// (but exit 1: docs/compatibility.md#analyze-quirk-17); checked before the options, as the original
/// does.
pub fn check_input(input: &Path) -> anyhow::Result<()> {
    if !input.is_file() {
        let shown = std::path::absolute(input).unwrap_or_else(|_| input.to_path_buf());
        bail!(
            "File {} does not exist or cannot be opened",
            shown.display()
        );
    }
    let size = std::fs::metadata(input)
        .with_context(|| input.display().to_string())?
        .len();
    if size == 0 {
        bail!("File {} is empty", input.display());
    }
    Ok(())
}

/// Ctrl-C (SIGINT), watched from the moment [`CtrlC::watch`] is called:
/// the handler must be in place before the server announces itself, or an
/// interrupt right after start-up would kill the process without
/// `Goodbye!`. Clones all resolve on the same interrupt.
#[derive(Clone)]
pub struct CtrlC(tokio::sync::watch::Receiver<bool>);

impl CtrlC {
    /// Installs the handler; call inside the runtime (`Runtime::enter`).
    pub fn watch() -> std::io::Result<CtrlC> {
        let mut signal = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let (tx, rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            if signal.recv().await.is_some() {
                let _ = tx.send(true);
            }
            // Keep the sender alive: waiters must not mistake the end of
            // this task for an interrupt.
            std::future::pending::<()>().await;
        });
        Ok(CtrlC(rx))
    }

    /// Resolves on Ctrl-C.
    pub async fn pressed(mut self) {
        if self.0.wait_for(|pressed| *pressed).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// `analyze -q/-p`: serve until Ctrl-C, then print `Goodbye!` and exit 0.
pub fn run(plan: &ServePlan) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout();
    let server = prepare(plan, &mut stdout)?;
    let runtime = http::runtime(&server.limits).context("cannot start the server threads")?;
    // Ctrl-C ends the server with `Goodbye!` (below), not the clean-up exit.
    unitrace_core::atomic::leave_interrupt_to_caller();
    let ctrl_c = {
        let _inside = runtime.enter();
        CtrlC::watch().context("cannot watch Ctrl-C")?
    };
    let _ = writeln!(
        stdout,
        "Serving charts on {} (Ctrl-C to stop)",
        server.url()
    );
    let _ = stdout.flush();
    runtime.block_on(server.serve(ctrl_c.pressed()))?;
    println!("Goodbye!");
    Ok(ExitCode::SUCCESS)
}
