//! Helpers shared by the server and uniview integration tests: start the
//! real binary on a free port, talk HTTP over std::net, stop it.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Upper bound for anything a test waits for (a server to come up, a
/// process to exit, its last lines): only turns a hang into a failure. The
/// suite runs on shared machines where a process may get little CPU for
/// seconds, so the bound is far above what a passing run ever needs.
pub const PATIENCE: Duration = Duration::from_secs(120);

pub fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/server")
        .join(name)
}

/// A running server process; killed when dropped.
pub struct Server {
    pub child: Child,
    /// Port of the chart server (`Serving charts on …`).
    pub port: Option<u16>,
    /// Perfetto link printed by uniview.
    pub perfetto_url: Option<String>,
    /// Every stdout line read so far, then the rest is read by a thread.
    pub lines: Vec<String>,
    rest: Option<mpsc::Receiver<String>>,
}

impl Server {
    /// Starts `program args…` and reads stdout until `ready` says the
    /// server is up (or the process ends, which fails the test).
    pub fn start(program: &str, args: &[&str], ready: impl Fn(&Server) -> bool) -> Server {
        Server::start_with_env(program, args, &[], ready)
    }

    /// [`Server::start`] with extra environment variables.
    pub fn start_with_env(
        program: &str,
        args: &[&str],
        env: &[(&str, &str)],
        ready: impl Fn(&Server) -> bool,
    ) -> Server {
        let child = Command::new(program)
            .args(args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let mut server = Server {
            child,
            port: None,
            perfetto_url: None,
            lines: Vec::new(),
            rest: None,
        };
        let stdout = server.child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || forward_lines(stdout, tx));
        loop {
            match rx.recv_timeout(PATIENCE) {
                Ok(line) => {
                    if let Some(rest) = line
                        .strip_prefix("Serving charts on http://127.0.0.1:")
                        .or_else(|| line.strip_prefix("Serving charts on https://127.0.0.1:"))
                    {
                        server.port = rest.split('/').next().and_then(|p| p.parse().ok());
                    }
                    if let Some(rest) = line.strip_prefix("Open ") {
                        server.perfetto_url = rest.split(' ').next().map(str::to_string);
                    }
                    server.lines.push(line);
                    if ready(&server) {
                        break;
                    }
                }
                Err(_) => {
                    let _ = server.child.kill();
                    let mut err = String::new();
                    if let Some(mut e) = server.child.stderr.take() {
                        let _ = e.read_to_string(&mut err);
                    }
                    panic!(
                        "server did not come up; stdout so far: {:?}; stderr: {err}",
                        server.lines
                    );
                }
            }
        }
        server.rest = Some(rx);
        server
    }

    /// `analyze ARGS` (with `--port 0`), ready once it prints its address.
    pub fn analyze(args: &[&str]) -> Server {
        let mut all = vec!["--port", "0"];
        all.extend_from_slice(args);
        Server::start(env!("CARGO_BIN_EXE_analyze"), &all, |s| s.port.is_some())
    }

    pub fn port(&self) -> u16 {
        self.port.expect("the server printed its port")
    }

    /// The trace server's port, from the Perfetto link.
    pub fn trace_port(&self) -> u16 {
        let url = self
            .perfetto_url
            .as_deref()
            .expect("uniview printed the link");
        let rest = url
            .split("url=http://127.0.0.1:")
            .nth(1)
            .expect("link has url=");
        rest.split('/')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("port in link")
    }

    /// Sends SIGINT (Ctrl-C) and waits for the exit; returns (exit code,
    /// remaining stdout).
    pub fn interrupt(self) -> (Option<i32>, String) {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
        self.wait()
    }

    /// Waits (at most [`PATIENCE`]) for the process to end by itself, then
    /// for the rest of its stdout (until the pipe closes).
    pub fn wait(self) -> (Option<i32>, String) {
        let (code, out, _) = self.wait_with_stderr();
        (code, out)
    }

    /// [`Server::wait`], and what the server wrote on stderr.
    pub fn wait_with_stderr(mut self) -> (Option<i32>, String, String) {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                let mut out = String::new();
                if let Some(rx) = self.rest.take() {
                    // Ends at once when the pipe closes (the sender is
                    // dropped); the bound covers a reader thread that gets
                    // no CPU for a while, which 5 s did not on a busy box.
                    while let Ok(line) = rx.recv_timeout(PATIENCE) {
                        out.push_str(&line);
                        out.push('\n');
                    }
                }
                let mut err = String::new();
                if let Some(mut e) = self.child.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                return (status.code(), out, err);
            }
            assert!(start.elapsed() < PATIENCE, "the server did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn forward_lines(stdout: ChildStdout, tx: mpsc::Sender<String>) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        if tx.send(line).is_err() {
            break;
        }
    }
}

/// One HTTP answer.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `request` (raw bytes) and reads the answer until the server
/// closes the connection (requests carry `Connection: close`).
pub fn exchange(port: u16, request: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(PATIENCE))?;
    stream.write_all(request)?;
    let mut out = Vec::new();
    stream.read_to_end(&mut out)?;
    Ok(out)
}

pub fn request(port: u16, method: &str, target: &str) -> Response {
    let raw = format!(
        "{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    );
    let bytes = exchange(port, raw.as_bytes()).expect("HTTP exchange");
    parse_response(&bytes).unwrap_or_else(|| {
        panic!(
            "not an HTTP response: {:?}",
            String::from_utf8_lossy(&bytes)
        )
    })
}

pub fn get(port: u16, target: &str) -> Response {
    request(port, "GET", target)
}

/// Parses a `Connection: close` response (Content-Length or read-to-end
/// body; chunked is not used by the servers for these answers).
pub fn parse_response(bytes: &[u8]) -> Option<Response> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&bytes[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    let status = status_line.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = bytes[end + 4..].to_vec();
    if let Some(len) = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
    {
        body.truncate(len);
    }
    Some(Response {
        status,
        headers,
        body,
    })
}

/// Percent-encodes like unitrace's links (docs/formats.md#trace-json-metrics-link).
pub fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The link unitrace writes for `kernel` / `instance`, without the host.
pub fn link(kernel: &str, instance: u64) -> String {
    format!("/{}/{instance}", encode(&format!("\"{kernel}\"")))
}

/// Half-closes a connection after sending `partial` and reports whether
/// the server closed it (read returns EOF or an answer) within [`PATIENCE`].
pub fn half_close(port: u16, partial: &[u8]) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(PATIENCE));
    let _ = stream.write_all(partial);
    let _ = stream.shutdown(Shutdown::Write);
    let mut out = Vec::new();
    stream.read_to_end(&mut out).is_ok()
}

/// Number of pages of a PDF (its `/Type /Page` objects).
pub fn pdf_pages(pdf: &[u8]) -> usize {
    let text = String::from_utf8_lossy(pdf);
    text.matches("/Type /Page").count() - text.matches("/Type /Pages").count()
}
