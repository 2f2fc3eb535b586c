//! The HTTP(S) machinery shared by `analyze -q/-p` and uniview's one-shot
//! trace server: hyper (HTTP/1.1) on a small tokio runtime, loopback only.
//!
//! Robustness limits (scripts.md 1.11 quirk 9: the original serves one
//! request at a time and hangs on a slow client):
//! * at most [`Limits::max_connections`] connections are open at once; more
//!   clients wait in the kernel's accept backlog instead of growing threads;
//! * request heads are capped at [`Limits::max_head_bytes`] (hyper answers
//!   `431` beyond that) and must arrive within [`Limits::head_timeout`];
//! * at most [`Limits::max_pending_heads`] connections may wait for their
//!   first full request head (idle or slow clients, TLS handshakes): the
//!   next one drops the oldest of them, so idle connections (slowloris)
//!   never take the slots of well-behaved clients
//!   (docs/robustness.md#servers);
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
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::{Notify, Semaphore};

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
    pub fn text(status: u16, message: impl Into<String>) -> Reply {
        Reply {
            status,
            headers: vec![("content-type", "text/plain; charset=utf-8".to_string())],
            body: ReplyBody::Bytes(Bytes::from(message.into())),
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
        let permit = tokio::select! {
            _ = &mut stop => break,
            permit = slots.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
        };
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
        // original (scripts.md 1.9) ignores non-local clients.
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
    queue: Mutex<VecDeque<(u64, Arc<Notify>)>>,
}

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
        while queue.len() >= self.cap {
            if let Some((_, oldest)) = queue.pop_front() {
                // `notify_one` keeps the wake-up if the task is not
                // waiting yet.
                oldest.notify_one();
            }
        }
        queue.push_back((id, signal.clone()));
        signal
    }

    /// Connection `id` sent a full head (or ended): no longer droppable.
    fn sent_head(&self, id: u64) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(at) = queue.iter().position(|(i, _)| *i == id) {
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
    let body = match reply.body {
        ReplyBody::Bytes(bytes) => ResponseBody::Bytes(Some(bytes)),
        ReplyBody::File(slice) => ResponseBody::File(Box::new(FileStream::new(slice))),
    };
    let mut response = hyper::Response::new(body);
    *response.status_mut() =
        hyper::StatusCode::from_u16(reply.status).unwrap_or(hyper::StatusCode::OK);
    let headers = response.headers_mut();
    for (name, value) in reply.headers {
        if let Ok(value) = hyper::header::HeaderValue::from_str(&value) {
            headers.append(name, value);
        }
    }
    response
}

/// Response body: bytes in memory, or a streamed [`FileSlice`].
pub enum ResponseBody {
    Bytes(Option<Bytes>),
    File(Box<FileStream>),
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        match self.get_mut() {
            ResponseBody::Bytes(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            ResponseBody::File(stream) => stream.poll_next(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Bytes(bytes) => bytes.is_none(),
            ResponseBody::File(stream) => stream.finished,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Bytes(Some(bytes)) => SizeHint::with_exact(bytes.len() as u64),
            ResponseBody::Bytes(None) => SizeHint::with_exact(0),
            ResponseBody::File(stream) => SizeHint::with_exact(
                stream.remaining + stream.suffix.as_ref().map_or(0, |s| s.len() as u64),
            ),
        }
    }
}

/// Reads a [`FileSlice`] in 256 kB chunks.
pub struct FileStream {
    path: PathBuf,
    state: FileState,
    remaining: u64,
    suffix: Option<Bytes>,
    buffer: Vec<u8>,
    finished: bool,
    on_complete: Option<Box<dyn FnOnce() + Send + Sync>>,
}

type OpenFuture = Pin<Box<dyn Future<Output = io::Result<tokio::fs::File>> + Send + Sync>>;

enum FileState {
    Unopened,
    Opening(OpenFuture),
    Open(tokio::fs::File),
}

const CHUNK: usize = 256 * 1024;

impl FileStream {
    fn new(slice: FileSlice) -> FileStream {
        FileStream {
            path: slice.path,
            state: FileState::Unopened,
            remaining: slice.len,
            suffix: Some(slice.suffix),
            buffer: Vec::new(),
            finished: false,
            on_complete: slice.on_complete,
        }
    }

    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        if self.remaining > 0 {
            loop {
                match &mut self.state {
                    FileState::Unopened => {
                        let path = self.path.clone();
                        self.state = FileState::Opening(Box::pin(async move {
                            tokio::fs::File::open(&path).await
                        }));
                    }
                    FileState::Opening(future) => match future.as_mut().poll(cx) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Err(e)) => return Poll::Ready(Some(Err(e))),
                        Poll::Ready(Ok(file)) => self.state = FileState::Open(file),
                    },
                    FileState::Open(file) => {
                        let want = CHUNK.min(usize::try_from(self.remaining).unwrap_or(CHUNK));
                        self.buffer.resize(want, 0);
                        let mut read = ReadBuf::new(&mut self.buffer);
                        match Pin::new(file).poll_read(cx, &mut read) {
                            Poll::Pending => return Poll::Pending,
                            Poll::Ready(Err(e)) => return Poll::Ready(Some(Err(e))),
                            Poll::Ready(Ok(())) => {}
                        }
                        let filled = read.filled();
                        if filled.is_empty() {
                            // The file shrank while being served.
                            return Poll::Ready(Some(Err(io::Error::new(
                                io::ErrorKind::UnexpectedEof,
                                format!("{}: file shrank while being sent", self.path.display()),
                            ))));
                        }
                        self.remaining -= filled.len() as u64;
                        let frame = Frame::data(Bytes::copy_from_slice(filled));
                        if self.remaining == 0 && self.suffix.as_ref().is_none_or(|s| s.is_empty())
                        {
                            self.suffix = None;
                            self.complete();
                        }
                        return Poll::Ready(Some(Ok(frame)));
                    }
                }
            }
        }
        if let Some(suffix) = self.suffix.take() {
            self.complete();
            if !suffix.is_empty() {
                return Poll::Ready(Some(Ok(Frame::data(suffix))));
            }
        }
        self.complete();
        Poll::Ready(None)
    }

    /// Marks the last byte as handed out. hyper stops polling a body whose
    /// length is known once that many bytes were sent, so completion is
    /// signalled with the last frame rather than at a final `None`.
    fn complete(&mut self) {
        if !self.finished {
            self.finished = true;
            if let Some(done) = self.on_complete.take() {
                done();
            }
        }
    }
}
