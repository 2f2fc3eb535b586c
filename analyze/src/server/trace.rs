//! uniview's trace server (docs/compatibility.md#uniview-trace-server): serves ONE trace file to
//! ui.perfetto.dev, repaired in memory when its writer was killed.
//!
//! The original appends `\n]\n}\n` to the user's file in place and serves
//! the whole directory; here the file is only read: [`TracePlan`] says which
//! prefix of it is valid and which closing bytes follow (the repair of
//! `unitrace_core::trace`: every complete event kept), and the handler
//! streams exactly that, for the one path that names the file.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::bail;
use bytes::Bytes;
use memchr::memmem;
use unitrace_core::result_dir::TraceFormat;
use unitrace_core::timeline::gzip::{GzipCut, GzipDamage};
use unitrace_core::trace::{scan, TraceError};

use super::http::{FileSlice, Handler, Reply, ReplyBody, RequestHead};
use super::request::percent_decode;

/// The origin of the Perfetto UI, the only site allowed to read the trace.
pub const PERFETTO_ORIGIN: &str = "https://ui.perfetto.dev";

/// What to serve for a trace file: `path[..len]` then `suffix`, or the
/// bytes of `memory` under the name of `path` (an in-memory merge).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TracePlan {
    pub path: PathBuf,
    pub len: u64,
    pub suffix: Vec<u8>,
    /// Bytes dropped after the last complete event, when the trace was cut.
    pub dropped_bytes: Option<u64>,
    /// The whole trace, held in memory (uniview `--result-dir` with several
    /// traces, docs/uniview.md#result-dir); `path` then only names it.
    pub memory: Option<Bytes>,
    /// The file is gzip, served as it is with `content-encoding: gzip`: the
    /// browser inflates it (docs/uniview.md#gzip).
    pub gzip: bool,
    /// What the served bytes are (JSON or `.pftrace`), for their type.
    pub format: TraceFormat,
    /// What the gzip stream's end held that is not the trace (bytes after
    /// it, a cut trailer): one warning each (docs/uniview.md#gzip).
    pub gzip_note: Option<String>,
}

impl TracePlan {
    /// Serves `bytes` at `/<file name of name>`; nothing is read or written
    /// on disk.
    pub fn in_memory(name: PathBuf, bytes: Vec<u8>) -> TracePlan {
        TracePlan {
            len: bytes.len() as u64,
            suffix: Vec::new(),
            dropped_bytes: None,
            memory: Some(Bytes::from(bytes)),
            gzip: false,
            format: TraceFormat::of_path(&name),
            gzip_note: None,
            path: name,
        }
    }

    /// Validates the trace in one streaming pass and plans its repair.
    /// Errors keep uniview's words (docs/compatibility.md#uniview-checks: `is empty`, `is
    /// invalid` with the reason) in the one error style of all tools,
    /// `FILE[:LINE]: problem` (docs/errors.md#one-line).
    pub fn for_file(path: &Path) -> anyhow::Result<TracePlan> {
        let shown = path.display();
        let size = std::fs::metadata(path)
            .map_err(|e| anyhow::anyhow!("{shown}: trace file cannot be read: {e}"))?
            .len();
        if size == 0 {
            bail!("{shown}: trace file is empty");
        }
        if crate::server::trace::is_gzip_file(path) {
            return TracePlan::for_gzip(path, size);
        }
        if TraceFormat::of_path(path) == TraceFormat::Pftrace {
            // A protobuf timeline has no closing tags to repair: records
            // are whole or cut, and Perfetto reads the complete ones. It is
            // served as it is, as uniview.py does (docs/uniview.md#pftrace).
            return Ok(TracePlan {
                path: path.to_path_buf(),
                len: size,
                suffix: Vec::new(),
                dropped_bytes: None,
                memory: None,
                gzip: false,
                format: TraceFormat::Pftrace,
                gzip_note: None,
            });
        }
        // Watched: a trace that changes while it is checked is an error
        // naming it (docs/robustness.md#changed-inputs).
        let file = unitrace_core::watched_file::WatchedFile::open(path)
            .map_err(|e| anyhow::anyhow!("{shown}: trace file cannot be read: {e}"))?;
        let summary = scan_plan(path, BufReader::with_capacity(1 << 20, file))?;
        if summary.empty {
            bail!("{shown}: trace file is invalid: it holds only blanks");
        }
        if !summary.has_trace_events && summary.truncation.is_none() && summary.form.is_some() {
            // An object without `traceEvents`; the array form always has
            // its events.
            if summary.form == Some(unitrace_core::trace::TraceForm::Object) {
                bail!("{shown}: trace file is invalid: no traceEvents array");
            }
        }
        let form = summary
            .form
            .unwrap_or(unitrace_core::trace::TraceForm::Object);
        let plan = match &summary.truncation {
            None => match summary.trailing_data {
                // Drop what follows the top-level value (not JSON).
                Some(_) => TracePlan {
                    path: path.to_path_buf(),
                    len: summary.value_end,
                    suffix: b"\n".to_vec(),
                    dropped_bytes: Some(size.saturating_sub(summary.value_end)),
                    memory: None,
                    gzip: false,
                    format: TraceFormat::Json,
                    gzip_note: None,
                },
                None => TracePlan {
                    path: path.to_path_buf(),
                    len: size,
                    suffix: Vec::new(),
                    dropped_bytes: None,
                    memory: None,
                    gzip: false,
                    format: TraceFormat::Json,
                    gzip_note: None,
                },
            },
            Some(cut) if cut.array_opened => TracePlan {
                path: path.to_path_buf(),
                len: cut.kept_bytes,
                suffix: form.closing().to_vec(),
                dropped_bytes: Some(cut.dropped_bytes),
                memory: None,
                gzip: false,
                format: TraceFormat::Json,
                gzip_note: None,
            },
            Some(cut) => bail!(
                "{shown}{}: trace file is invalid: it ends before its event array starts",
                cut.line.map(|l| format!(":{l}")).unwrap_or_default()
            ),
        };
        Ok(plan)
    }

    /// A gzipped trace (`*.json.gz`, Kineto's `*.pt.trace.json.gz`,
    /// `*.pftrace.gz`; docs/uniview.md#gzip): checked on its inflated bytes;
    /// a whole one is served as it is, gzip-encoded; one to repair (cut,
    /// or followed by other data) is inflated and repaired in memory.
    fn for_gzip(path: &Path, size: u64) -> anyhow::Result<TracePlan> {
        use unitrace_core::timeline::detect::Sniffed;
        let shown = path.display();
        let invalid = |e: unitrace_core::InputError| {
            anyhow::anyhow!("{shown}: trace file is invalid: {}", e.problem)
        };
        let opened = unitrace_core::timeline::open(path).map_err(invalid)?;
        let whole = |format| TracePlan {
            path: path.to_path_buf(),
            len: size,
            suffix: Vec::new(),
            dropped_bytes: None,
            memory: None,
            gzip: true,
            format,
            gzip_note: None,
        };
        match opened.sniffed {
            Sniffed::Pftrace => return Ok(whole(TraceFormat::Pftrace)),
            Sniffed::Empty => bail!("{shown}: trace file is invalid: it holds only blanks"),
            _ => {}
        }
        let watch = opened.gzip.clone();
        let summary = scan_plan(path, opened.into_reader())?;
        // Bytes after the gzip data, or a cut trailer, are not served
        // gzip-encoded: a browser's inflater may refuse what the file's
        // reader forgave. The whole content is served inflated instead.
        let gzip_note = match watch.and_then(|w| w.damage()) {
            Some(d @ (GzipDamage::Trailing { .. } | GzipDamage::Cut(GzipCut::Trailer))) => {
                Some(d.describe())
            }
            _ => None,
        };
        if !summary.has_trace_events
            && summary.truncation.is_none()
            && summary.form == Some(unitrace_core::trace::TraceForm::Object)
        {
            bail!("{shown}: trace file is invalid: no traceEvents array");
        }
        let (keep, suffix): (u64, &[u8]) = match &summary.truncation {
            None if summary.trailing_data.is_none() && gzip_note.is_none() => {
                return Ok(whole(TraceFormat::Json))
            }
            None if summary.trailing_data.is_none() => (summary.bytes_read, b""),
            None => (summary.value_end, b"\n"),
            Some(cut) if cut.array_opened => {
                let form = summary
                    .form
                    .unwrap_or(unitrace_core::trace::TraceForm::Object);
                (cut.kept_bytes, form.closing())
            }
            Some(cut) => bail!(
                "{shown}{}: trace file is invalid: it ends before its event array starts",
                cut.line.map(|l| format!(":{l}")).unwrap_or_default()
            ),
        };
        let mut bytes = Vec::with_capacity(keep as usize + suffix.len());
        unitrace_core::timeline::open(path)
            .map_err(invalid)?
            .into_reader()
            .take(keep)
            .read_to_end(&mut bytes)
            .map_err(|e| anyhow::anyhow!("{shown}: trace file cannot be read: {e}"))?;
        let dropped = summary.bytes_read.saturating_sub(keep);
        bytes.extend_from_slice(suffix);
        let mut plan = TracePlan::in_memory(path.to_path_buf(), bytes);
        let repaired = summary.truncation.is_some() || summary.trailing_data.is_some();
        plan.dropped_bytes = repaired.then_some(dropped);
        plan.format = TraceFormat::Json;
        plan.gzip_note = gzip_note;
        Ok(plan)
    }

    /// Bytes a client receives.
    pub fn served_len(&self) -> u64 {
        self.len + self.suffix.len() as u64
    }
}

/// Whether a file starts with gzip's magic bytes.
pub fn is_gzip_file(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 2];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| unitrace_core::timeline::detect::is_gzip(&magic))
}

/// Validates a trace's JSON in one streaming pass; the error in uniview's
/// words (docs/compatibility.md#uniview-checks).
fn scan_plan(
    path: &Path,
    src: impl std::io::Read,
) -> anyhow::Result<unitrace_core::trace::TraceSummary> {
    scan(src).map_err(|e: TraceError| {
        if let unitrace_core::trace::TraceErrorKind::Io(io) = &e.kind {
            if unitrace_core::watched_file::ChangedWhileRead::of(io).is_some() {
                return anyhow::anyhow!("{}: {io}", path.display());
            }
        }
        let at = match e.line {
            Some(line) => format!("{}:{line}", path.display()),
            None => path.display().to_string(),
        };
        anyhow::anyhow!("{at}: trace file is invalid: {}", e.problem())
    })
}

/// Whether the trace's metric links use `https://` (legacy traces written
/// between 2024-08 and 2025-04, docs/formats.md#trace-json-metrics-link), which makes uniview run the
/// chart server with TLS. Decided by the first link to the chart server
/// (`http(s)://localhost:8000/`), not by any `https://` anywhere in the file
/// as the original does (docs/compatibility.md#uniview-3: "plain substring").
pub fn links_use_https(path: &Path) -> std::io::Result<bool> {
    Ok(first_metric_link(path)? == Some(LinkScheme::Https))
}

/// The scheme of the trace's first metric link (`http(s)://localhost:8000/`),
/// or `None` when the trace has no such link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkScheme {
    Http,
    Https,
}

/// The port every metric link of a unitrace trace points at.
pub const LINK_PORT: u16 = 8000;

/// Finds the trace's first metric link (see [`links_use_https`]).
pub fn first_metric_link(path: &Path) -> std::io::Result<Option<LinkScheme>> {
    if is_gzip_file(path) {
        let opened =
            unitrace_core::timeline::open(path).map_err(|e| std::io::Error::other(e.problem))?;
        return first_metric_link_in(opened.into_reader());
    }
    first_metric_link_in(File::open(path)?)
}

/// [`first_metric_link`] over any reader (an in-memory trace).
pub fn first_metric_link_in(mut file: impl std::io::Read) -> std::io::Result<Option<LinkScheme>> {
    // A .pftrace holds its links as plain protobuf strings (always
    // `http://`, docs/formats.md#pftrace), so the same byte scan finds them.
    const NEEDLE: &[u8] = b"://localhost:8000/";
    let finder = memmem::Finder::new(NEEDLE);
    let mut buffer = vec![0u8; 1 << 20];
    // Keep the last bytes of the previous chunk so a link cut by a chunk
    // border is still found (needle + the `https` before it).
    const KEEP: usize = NEEDLE.len() + 5;
    let mut carried = 0usize;
    loop {
        let n = file.read(&mut buffer[carried..])?;
        if n == 0 {
            return Ok(None);
        }
        let end = carried + n;
        if let Some(at) = finder.find(&buffer[..end]) {
            let https = at >= 5 && &buffer[at - 5..at] == b"https";
            return Ok(Some(if https {
                LinkScheme::Https
            } else {
                LinkScheme::Http
            }));
        }
        let keep = KEEP.min(end);
        buffer.copy_within(end - keep..end, 0);
        carried = keep;
    }
}

/// Percent-encodes a file name for the `url=` parameter of the Perfetto
/// link (the original inserts it raw: docs/compatibility.md#uniview-4).
pub fn encode_component(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The link that opens the trace in Perfetto.
pub fn perfetto_url(port: u16, file_name: &str) -> String {
    format!(
        "{PERFETTO_ORIGIN}/#!/?url=http://127.0.0.1:{port}/{}",
        encode_component(file_name)
    )
}

/// Serves the planned trace at `/<file name>` and nothing else; every
/// answer carries the CORS and cache headers Perfetto needs
/// (docs/compatibility.md#uniview-trace-server). `delivered` runs each time the whole trace has been handed out.
pub struct TraceHandler {
    plan: TracePlan,
    file_name: String,
    delivered: Arc<dyn Fn() + Send + Sync>,
}

impl TraceHandler {
    pub fn new(plan: TracePlan, delivered: Arc<dyn Fn() + Send + Sync>) -> TraceHandler {
        let file_name = plan
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        TraceHandler {
            plan,
            file_name,
            delivered,
        }
    }

    fn names_the_trace(&self, target: &str) -> bool {
        let path = target.split(['?', '#']).next().unwrap_or("");
        let Some(requested) = path.strip_prefix('/') else {
            return false;
        };
        // Browsers may send the name encoded once more or once less than the
        // link; both name the one file (never a path: `/` is not allowed in
        // a file name, so `..` tricks cannot match).
        requested == self.file_name
            || percent_decode(requested) == self.file_name
            || requested == encode_component(&self.file_name)
    }
}

fn with_cors(reply: Reply) -> Reply {
    reply
        .with_header("access-control-allow-origin", PERFETTO_ORIGIN)
        .with_header("cache-control", "no-cache")
}

impl Handler for TraceHandler {
    fn handle(&self, head: &RequestHead) -> Reply {
        match head.method.as_str() {
            "GET" | "HEAD" => {}
            "OPTIONS" => {
                // A CORS preflight (not needed for Perfetto's plain GET, but
                // harmless to answer).
                let mut reply = Reply::text(204, "");
                reply.body = ReplyBody::Bytes(Bytes::new());
                return with_cors(reply)
                    .with_header("access-control-allow-methods", "GET, HEAD")
                    .with_header("allow", "GET, HEAD, OPTIONS");
            }
            _ => return with_cors(Reply::method_not_allowed()),
        }
        if !self.names_the_trace(&head.target) {
            return with_cors(Reply::text(404, "Not found"));
        }
        let delivered = self.delivered.clone();
        let on_complete: Option<Box<dyn FnOnce() + Send + Sync>> =
            Some(Box::new(move || delivered()));
        with_cors(Reply {
            status: 200,
            headers: {
                let mut headers = vec![(
                    "content-type",
                    match self.plan.format {
                        TraceFormat::Json => "application/json",
                        TraceFormat::Pftrace => "application/octet-stream",
                    }
                    .to_string(),
                )];
                if self.plan.gzip {
                    headers.push(("content-encoding", "gzip".to_string()));
                }
                headers
            },
            body: match &self.plan.memory {
                Some(bytes) => ReplyBody::Memory {
                    bytes: bytes.clone(),
                    on_complete,
                },
                None => ReplyBody::File(FileSlice {
                    path: self.plan.path.clone(),
                    len: self.plan.len,
                    suffix: Bytes::from(self.plan.suffix.clone()),
                    on_complete,
                }),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_file_names_for_the_link() {
        assert_eq!(
            perfetto_url(9001, "app.123.json"),
            "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/app.123.json"
        );
        assert_eq!(
            encode_component("my trace#1&x.json"),
            "my%20trace%231%26x.json"
        );
    }

    #[test]
    fn finds_the_link_scheme() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(
            &path,
            "{\"a\": \"https://example.com\", \"metrics\": \"http://localhost:8000/%22k%22/1\"}",
        )
        .unwrap();
        assert!(!links_use_https(&path).unwrap());
        let mut long = "x".repeat((1 << 20) - 10);
        long.push_str("\"https://localhost:8000/%22k%22/1\"");
        std::fs::write(&path, long).unwrap();
        assert!(links_use_https(&path).unwrap());
        std::fs::write(&path, "{}").unwrap();
        assert!(!links_use_https(&path).unwrap());
    }

    #[test]
    fn plans_repair_of_a_truncated_trace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        let complete = "{ \"traceEvents\":[\n{\"ph\": \"X\", \"name\": \"a\"},\n{\"ph\": \"X\", \"name\": \"b\"}";
        std::fs::write(&path, format!("{complete},\n{{\"ph\": \"X\", \"na")).unwrap();
        let plan = TracePlan::for_file(&path).unwrap();
        assert_eq!(plan.len, complete.len() as u64);
        assert_eq!(plan.suffix, b"\n]\n}\n");
        std::fs::write(&path, format!("{complete}\n]\n}}\n")).unwrap();
        let plan = TracePlan::for_file(&path).unwrap();
        assert_eq!(plan.len, complete.len() as u64 + 5);
        assert!(plan.suffix.is_empty());
        assert_eq!(plan.dropped_bytes, None);
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn serves_gzip_encoded_or_repairs_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rank0.pt.trace.json.gz");
        let complete = "\n{ \"schemaVersion\": 1, \"traceEvents\":[\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\"},\n{\"ph\": \"X\", \"name\": \"b\"}";
        let whole = format!("{complete}\n]\n}}\n");
        std::fs::write(&path, gzip(whole.as_bytes())).unwrap();
        let plan = TracePlan::for_file(&path).unwrap();
        assert!(plan.gzip && plan.memory.is_none());
        assert_eq!(plan.len, std::fs::metadata(&path).unwrap().len());
        assert_eq!(plan.format, TraceFormat::Json);
        // Cut by a killed writer: inflated and repaired in memory.
        std::fs::write(
            &path,
            gzip(format!("{complete},\n{{\"ph\": \"X\", \"na").as_bytes()),
        )
        .unwrap();
        let plan = TracePlan::for_file(&path).unwrap();
        assert!(!plan.gzip);
        let served = plan.memory.unwrap();
        assert_eq!(&served[..], format!("{complete}\n]\n}}\n").as_bytes());
        assert_eq!(plan.dropped_bytes, Some(17));
        // Bytes after the gzip data, or a cut trailer: the whole content,
        // served inflated, with a note for the warning.
        let gz = gzip(whole.as_bytes());
        let mut padded = gz.clone();
        padded.extend_from_slice(&[0u8; 100]);
        let trailer_cut = &gz[..gz.len() - 4];
        let padded_note = format!(
            "100 bytes after the end of the gzip data at byte {} (zero bytes); ignored",
            gz.len()
        );
        let trailer_note = "gzip stream cut short in its 8-byte trailer (writer killed?): \
                            the content is whole but its CRC was not checked";
        for (bytes, note) in [
            (&padded[..], padded_note.as_str()),
            (trailer_cut, trailer_note),
        ] {
            std::fs::write(&path, bytes).unwrap();
            let plan = TracePlan::for_file(&path).unwrap();
            assert!(!plan.gzip);
            assert_eq!(plan.gzip_note.as_deref(), Some(note));
            assert_eq!(plan.dropped_bytes, None);
            assert_eq!(&plan.memory.unwrap()[..], whole.as_bytes());
        }
        // gzip of something else, and links inside gzip.
        std::fs::write(&path, gzip(b"Kernel,GlobalInstanceId\n")).unwrap();
        let err = TracePlan::for_file(&path).unwrap_err().to_string();
        assert!(err.contains("is invalid: not a trace"), "{err}");
        std::fs::write(
            &path,
            gzip(b"{\"traceEvents\": [{\"args\": {\"metrics\": \"https://localhost:8000/k/1\"}}]}"),
        )
        .unwrap();
        assert!(links_use_https(&path).unwrap());
    }

    #[test]
    fn rejects_empty_and_invalid_traces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.json");
        std::fs::write(&path, "").unwrap();
        let err = TracePlan::for_file(&path).unwrap_err().to_string();
        assert!(err.ends_with("is empty"), "{err}");
        std::fs::write(&path, "Kernel,GlobalInstanceId\n").unwrap();
        let err = TracePlan::for_file(&path).unwrap_err().to_string();
        assert!(err.contains("is invalid"), "{err}");
    }
}
