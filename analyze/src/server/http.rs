//! The HTTP(S) machinery shared by `analyze -q/-p` and uniview's one-shot
//! trace server: hyper (HTTP/1.1) on a small tokio runtime, loopback only.
//!
//! Robustness limits (docs/compatibility.md#analyze-quirk-9: the original serves one
//! request at a time and hangs on a slow client):
//! * at most [`Limits::max_connections`] connections are open at once; more
//!   clients wait in the kernel's accept backlog instead of growing threads;
//! * request heads are capped at [`Limits::max_head_bytes`] (hyper answers
//!   `431` beyond that) and must arrive within [`Limits::head_timeout`];
//! * at most [`Limits::max_pending_heads`] connections may wait for their
//!   first full request head (idle or slow clients, TLS handshakes) for
//!   more than a second: beyond that, and whenever every connection slot is
//!   taken, the oldest such connection is dropped, so idle connections
//!   (slowloris) never keep well-behaved clients waiting for the head
//!   time-out (docs/robustness.md#servers);
//!   a connection lives at most [`Limits::connection_timeout`], so a
//!   half-closed or silent client can never pin a slot for good;
//! * handlers (chart rendering, CPU bound) run on tokio's blocking pool,
//!   bounded by [`Limits::workers`] threads;
//! * accept errors (e.g. out of file descriptors) are retried after a short
//!   pause, never end the server.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::render::escape::escape;
use bytes::Bytes;
use futures_util::{stream, StreamExt, TryStreamExt};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};
use tokio_util::io::ReaderStream;

/// What a handler sees of a request: enough to route it, nothing more (the
/// servers answer GET only, request bodies are never read).
#[derive(Debug, Clone)]
pub struct RequestHead {
    pub method: String,
    /// Path and query exactly as sent (still percent-encoded).
    pub target: String,
    pub peer: SocketAddr,
}

/// The answer to one request.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: ReplyBody,
}

impl Reply {
    /// A `text/plain` answer (the original's messages are plain text).
    /// An error (4xx, 5xx) may quote the request (a kernel name, a query
    /// value such as `<script>`): its text is HTML-escaped and sent as
    /// HTML, which a browser shows as the text; every reply carries
    /// `X-Content-Type-Options: nosniff` (docs/robustness.md#servers).
    pub fn text(status: u16, message: impl Into<String>) -> Reply {
        let message = message.into();
        let (content_type, body) = if status >= 400 {
            ("text/html; charset=utf-8", escape(&message).into_owned())
        } else {
            ("text/plain; charset=utf-8", message)
        };
        Reply {
            status,
            headers: vec![("content-type", content_type.to_string())],
            body: ReplyBody::Bytes(Bytes::from(body)),
        }
    }

    /// A document of the given content type.
    pub fn document(content_type: &str, body: Vec<u8>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type", content_type.to_string())],
            body: ReplyBody::Bytes(Bytes::from(body)),
        }
    }

    /// `405` with the `Allow` header, for every method but GET/HEAD.
    pub fn method_not_allowed() -> Reply {
        let mut reply = Reply::text(405, "Method not allowed: use GET");
        reply.headers.push(("allow", "GET, HEAD".to_string()));
        reply
    }

    pub fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Reply {
        self.headers.push((name, value.into()));
        self
    }
}

/// Body of a [`Reply`]: bytes in memory, or a prefix of a file followed by a
/// few bytes held in memory (uniview's repaired trace: the file's complete
/// part plus the closing brackets), streamed so a multi-GB trace is never
/// loaded whole.
pub enum ReplyBody {
    Bytes(Bytes),
    File(FileSlice),
    /// Bytes held in memory (uniview's in-memory merge of several traces),
    /// sent in chunks; `on_complete` runs once the last byte was handed out.
    Memory {
        bytes: Bytes,
        on_complete: Option<Box<dyn FnOnce() + Send + Sync>>,
    },
}

/// `path[..len]` followed by `suffix`; `on_complete` runs once the last byte
/// has been handed to the connection.
pub struct FileSlice {
    pub path: PathBuf,
    pub len: u64,
    pub suffix: Bytes,
    pub on_complete: Option<Box<dyn FnOnce() + Send + Sync>>,
}

/// Answers requests. Runs on the blocking pool: it may read files and
/// render charts synchronously.
pub trait Handler: Send + Sync + 'static {
    fn handle(&self, head: &RequestHead) -> Reply;
}

/// Bounds that keep the server alive under bad or many clients.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_connections: usize,
    /// Connections that have not sent a full request head yet; beyond it
    /// the oldest is dropped.
    pub max_pending_heads: usize,
    pub workers: usize,
    pub max_head_bytes: usize,
    pub head_timeout: Duration,
    pub connection_timeout: Duration,
    pub tls_handshake_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 256,
            // Well below `max_connections`: idle connections can hold at
            // most this many slots.
            max_pending_heads: 64,
            workers: 4,
            // Kernel names of templated C++ code run to a few kB and the
            // link percent-encodes most of their bytes three-fold.
            max_head_bytes: 64 * 1024,
            head_timeout: Duration::from_secs(10),
            connection_timeout: Duration::from_secs(300),
            tls_handshake_timeout: Duration::from_secs(10),
        }
    }
}

/// A tokio runtime sized for the servers: two I/O threads, `workers`
/// threads for handlers.
pub fn runtime(limits: &Limits) -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(limits.workers.max(1))
        .enable_all()
        .build()
}

/// Binds `127.0.0.1:port` (port 0: any free port). Never another interface:
/// the charts are for the local user only.
pub fn bind_loopback(port: u16) -> io::Result<std::net::TcpListener> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Serves `handler` on `listener` until `stop` completes, then stops
/// accepting, lets requests in flight finish (at most a few seconds) and
/// returns.
pub async fn serve(
    listener: std::net::TcpListener,
    tls: Option<Arc<rustls::ServerConfig>>,
    handler: Arc<dyn Handler>,
    limits: Limits,
    stop: impl Future<Output = ()>,
) -> io::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = Arc::new(GracefulShutdown::new());
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    let pending = Arc::new(PendingHeads::new(limits.max_pending_heads));
    let next_id = AtomicU64::new(0);
    tokio::pin!(stop);
    loop {
        // All slots taken: make room by dropping connections that have
        // waited too long for a head, re-checking as they age.
        let permit = loop {
            if let Ok(p) = slots.clone().try_acquire_owned() {
                break Some(p);
            }
            pending.drop_one_stale();
            tokio::select! {
                _ = &mut stop => break None,
                permit = slots.clone().acquire_owned() => break permit.ok(),
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        };
        let Some(permit) = permit else { break };
        let accepted = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // EMFILE, ECONNABORTED…: transient; pause so an fd shortage
                // does not spin, then keep serving.
                eprintln!("analyze: warning: accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // The listener is bound to 127.0.0.1; this is a second fence, as the
        // original (docs/compatibility.md#analyze-server) ignores non-local clients.
        if !peer.ip().is_loopback() {
            continue;
        }
        let handler = handler.clone();
        let acceptor = acceptor.clone();
        let watcher = graceful.watcher();
        let id = next_id.fetch_add(1, Ordering::Relaxed);
        let evicted = pending.admit(id);
        let pending = pending.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let connection = async {
                match acceptor {
                    None => {
                        serve_connection(stream, peer, handler, limits, watcher, &pending, id).await
                    }
                    Some(acceptor) => {
                        let handshake = acceptor.accept(stream);
                        if let Ok(Ok(tls_stream)) =
                            tokio::time::timeout(limits.tls_handshake_timeout, handshake).await
                        {
                            serve_connection(
                                tls_stream, peer, handler, limits, watcher, &pending, id,
                            )
                            .await;
                        }
                    }
                }
            };
            tokio::select! {
                // Dropped for a newer connection while still without a head.
                _ = evicted.notified() => {}
                _ = connection => {}
            }
            pending.sent_head(id);
        });
    }
    drop(listener);
    if let Ok(graceful) = Arc::try_unwrap(graceful) {
        let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
    }
    Ok(())
}

/// The connections still waiting for their first full request head, oldest
/// first, each with the signal that drops it.
struct PendingHeads {
    cap: usize,
    queue: Mutex<VecDeque<(u64, Instant, Arc<Notify>)>>,
}

/// A connection is only dropped for want of a head after this long: a
/// burst of well-behaved clients (hundreds connecting at once, heads not
/// read yet) is never mistaken for idle ones.
const STALE_AFTER: Duration = Duration::from_secs(1);

impl PendingHeads {
    fn new(cap: usize) -> PendingHeads {
        PendingHeads {
            cap: cap.max(1),
            queue: Mutex::new(VecDeque::new()),
        }
    }

    /// Registers connection `id`; drops the oldest waiting one when the
    /// cap is reached. The returned signal fires when `id` is dropped.
    fn admit(&self, id: u64) -> Arc<Notify> {
        let signal = Arc::new(Notify::new());
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        while queue.len() >= self.cap && Self::drop_oldest_if_stale(&mut queue) {}
        queue.push_back((id, Instant::now(), signal.clone()));
        signal
    }

    /// Drops the oldest waiting connection if it has waited
    /// [`STALE_AFTER`]; true if one was dropped.
    fn drop_one_stale(&self) -> bool {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        Self::drop_oldest_if_stale(&mut queue)
    }

    fn drop_oldest_if_stale(queue: &mut VecDeque<(u64, Instant, Arc<Notify>)>) -> bool {
        match queue.front() {
            Some((_, since, _)) if since.elapsed() >= STALE_AFTER => {
                if let Some((_, _, oldest)) = queue.pop_front() {
                    // `notify_one` keeps the wake-up if the task is not
                    // waiting yet.
                    oldest.notify_one();
                }
                true
            }
            _ => false,
        }
    }

    /// Connection `id` sent a full head (or ended): no longer droppable.
    fn sent_head(&self, id: u64) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = queue.iter().position(|(i, _, _)| *i == id) {
            queue.remove(at);
        }
    }
}

async fn serve_connection<S>(
    stream: S,
    peer: SocketAddr,
    handler: Arc<dyn Handler>,
    limits: Limits,
    watcher: hyper_util::server::graceful::Watcher,
    pending: &Arc<PendingHeads>,
    id: u64,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let pending = pending.clone();
    let service = service_fn(move |request: hyper::Request<Incoming>| {
        let handler = handler.clone();
        pending.sent_head(id);
        async move {
            let head = RequestHead {
                method: request.method().as_str().to_string(),
                target: request
                    .uri()
                    .path_and_query()
                    .map(|p| p.as_str().to_string())
                    .unwrap_or_else(|| "/".to_string()),
                peer,
            };
            // Request bodies are not used; dropping `request` lets hyper
            // close the connection if a client sent one.
            drop(request);
            let reply = match tokio::task::spawn_blocking(move || handler.handle(&head)).await {
                Ok(reply) => reply,
                Err(_) => Reply::text(500, "Internal error while answering the request"),
            };
            Ok::<_, Infallible>(into_response(reply))
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head_timeout)
        .max_buf_size(limits.max_head_bytes.max(8192))
        .keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    let connection = watcher.watch(connection);
    let _ = tokio::time::timeout(limits.connection_timeout, connection).await;
}

fn into_response(reply: Reply) -> hyper::Response<ResponseBody> {
    let (body, length) = match reply.body {
        ReplyBody::Bytes(bytes) => (
            Full::new(bytes).map_err(|e| match e {}).boxed_unsync(),
            None,
        ),
        ReplyBody::File(slice) => {
            let length = slice.len + slice.suffix.len() as u64;
            (file_body(slice), Some(length))
        }
        ReplyBody::Memory { bytes, on_complete } => {
            let length = bytes.len() as u64;
            (memory_body(bytes, on_complete), Some(length))
        }
    };
    let mut response = hyper::Response::new(body);
    *response.status_mut() =
        hyper::StatusCode::from_u16(reply.status).unwrap_or(hyper::StatusCode::OK);
    let headers = response.headers_mut();
    // No reply is ever read as another type than it says
    // (docs/robustness.md#servers).
    headers.insert(
        hyper::header::X_CONTENT_TYPE_OPTIONS,
        hyper::header::HeaderValue::from_static("nosniff"),
    );
    if let Some(length) = length {
        // A stream has no size hint: the length is known, say it.
        headers.insert(hyper::header::CONTENT_LENGTH, length.into());
    }
    for (name, value) in reply.headers {
        if let Ok(value) = hyper::header::HeaderValue::from_str(&value) {
            headers.append(name, value);
        }
    }
    response
}

/// Response body: bytes in memory, or a streamed [`FileSlice`].
pub type ResponseBody = UnsyncBoxBody<Bytes, io::Error>;

const CHUNK: usize = 256 * 1024;

/// `bytes` in 256 kB chunks (cheap `Bytes` slices); `on_complete` runs
/// with the last one, as for [`file_body`].
fn memory_body(bytes: Bytes, on_complete: Option<Box<dyn FnOnce() + Send + Sync>>) -> ResponseBody {
    let mut on_complete = on_complete;
    if bytes.is_empty() {
        if let Some(done) = on_complete.take() {
            done();
        }
    }
    let total = bytes.len();
    let chunks = (0..total.div_ceil(CHUNK)).map(move |i| {
        let end = ((i + 1) * CHUNK).min(total);
        let chunk = bytes.slice(i * CHUNK..end);
        if end == total {
            if let Some(done) = on_complete.take() {
                done();
            }
        }
        Ok::<_, io::Error>(Frame::data(chunk))
    });
    StreamBody::new(stream::iter(chunks)).boxed_unsync()
}

/// `path[..len]` in 256 kB chunks (tokio-util's `ReaderStream`), then the
/// suffix, as one `StreamBody`. `on_complete` runs with the last frame:
/// hyper stops polling a body of known length once that many bytes were
/// sent, so a final `None` may never be asked for.
fn file_body(slice: FileSlice) -> ResponseBody {
    let FileSlice {
        path,
        len,
        suffix,
        on_complete,
    } = slice;
    let total = len + suffix.len() as u64;
    let mut on_complete = on_complete;
    if total == 0 {
        if let Some(done) = on_complete.take() {
            done();
        }
    }
    let file_bytes = Arc::new(AtomicU64::new(0));
    let counted = file_bytes.clone();
    let shown = path.display().to_string();
    let file_part = stream::once(async move { tokio::fs::File::open(&path).await })
        .map_ok(move |file| ReaderStream::with_capacity(file.take(len), CHUNK))
        .try_flatten()
        .inspect_ok(move |chunk| {
            counted.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        });
    let suffix_part = stream::once(async move {
        if file_bytes.load(Ordering::Relaxed) < len {
            Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{shown}: file shrank while being sent"),
            ))
        } else {
            Ok(suffix)
        }
    });
    let mut sent = 0u64;
    let frames = file_part
        .chain(suffix_part)
        .try_filter(|chunk| std::future::ready(!chunk.is_empty()))
        .map_ok(move |chunk| {
            sent += chunk.len() as u64;
            if sent >= total {
                if let Some(done) = on_complete.take() {
                    done();
                }
            }
            Frame::data(chunk)
        });
    StreamBody::new(frames).boxed_unsync()
}
