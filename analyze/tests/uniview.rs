//! `uniview` end to end (docs/compatibility.md#uniview): checks and messages, the one-shot
//! trace server (CORS, one file only, repaired in memory, file untouched),
//! the browser hand-off and the chart server next to it.

use std::path::Path;
use std::process::Command;
use std::time::SystemTime;

use crate::server_common::*;

const MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";
const UNIVIEW: &str = env!("CARGO_BIN_EXE_uniview");

fn uniview_fails(args: &[&str]) -> String {
    let output = Command::new(UNIVIEW)
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{args:?}: {output:?}");
    String::from_utf8(output.stderr).unwrap()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Bytes and modification time, to prove a file was not touched.
fn snapshot(p: &Path) -> (Vec<u8>, SystemTime) {
    (
        std::fs::read(p).unwrap(),
        std::fs::metadata(p).unwrap().modified().unwrap(),
    )
}

fn start(args: &[&str]) -> Server {
    let mut all = vec!["--trace-port", "0", "--port", "0", "--no-browser"];
    all.extend_from_slice(args);
    let wants_charts = args.contains(&"-m");
    Server::start(UNIVIEW, &all, move |s| {
        s.perfetto_url.is_some() && (!wants_charts || s.port.is_some())
    })
}

#[test]
fn checks_in_the_original_order_with_its_messages() {
    let trace = testdata("trace.json");
    let metrics = testdata("metrics3.csv");
    let stalls = testdata("stalls.csv");
    let options = testdata("options.txt");
    assert_eq!(
        uniview_fails(&["-t", "/nonexistent/t.json"]),
        "uniview: /nonexistent/t.json: trace file is not found\n"
    );
    assert_eq!(
        uniview_fails(&["-t", path(&trace), "-m", "/nonexistent/m.csv"]),
        "uniview: /nonexistent/m.csv: metrics file is not found\n"
    );
    assert_eq!(
        uniview_fails(&["-t", path(&trace), "-f", path(&options)]),
        "uniview: Metrics file is missing\n"
    );
    assert_eq!(
        uniview_fails(&["-t", path(&trace), "-s", "/tmp"]),
        "uniview: Metrics file is missing\n"
    );
    assert_eq!(
        uniview_fails(&["-t", path(&trace), "-m", path(&metrics)]),
        "uniview: Config file is missing: metric charts need their options, e.g. -f pvc/ComputeBasic.txt (a built-in preset) or -f FILE (docs/uniview.md)\n"
    );
    // An option file that cannot be read is a usage error in uniview as in
    // `analyze -f` (exit 2; docs/robustness.md#exit-codes).
    for (config, problem) in [
        ("/nonexistent/o.txt", "no such file"),
        ("/tmp", "is a directory"),
    ] {
        let output = Command::new(UNIVIEW)
            .args(["-t", path(&trace), "-m", path(&metrics), "-f", config])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert_eq!(
            String::from_utf8(output.stderr).unwrap(),
            format!("uniview: {config}: cannot open option file: {problem}\n")
        );
        let output = Command::new(env!("CARGO_BIN_EXE_analyze"))
            .args(["-f", config, path(&metrics)])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
    }
    assert_eq!(
        uniview_fails(&[
            "-t",
            path(&trace),
            "-m",
            path(&stalls),
            "-s",
            "/nonexistent/dump"
        ]),
        "uniview: /nonexistent/dump: shader dump folder is not found\n"
    );
}

/// docs/compatibility.md#uniview-2: the original treats a file with neither a
/// `GlobalInstanceId` nor an `IP[Address]` column as a stall file.
#[test]
fn a_metrics_file_of_neither_kind_is_an_error() {
    let trace = testdata("trace.json");
    let err = uniview_fails(&["-t", path(&trace), "-m", path(&testdata("README.md"))]);
    assert!(
        err.contains("is neither a metric CSV (no GlobalInstanceId column) nor a stall CSV"),
        "{err}"
    );
}

#[test]
fn empty_and_invalid_traces_are_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "").unwrap();
    assert_eq!(
        uniview_fails(&["-t", path(&empty)]),
        format!("uniview: {}: trace file is empty\n", empty.display())
    );
    let invalid = dir.path().join("bad.json");
    std::fs::write(&invalid, "Kernel, GlobalInstanceId\n").unwrap();
    let before = snapshot(&invalid);
    let err = uniview_fails(&["-t", path(&invalid)]);
    assert!(
        err.starts_with(&format!(
            "uniview: {}:1: trace file is invalid: not a JSON trace",
            invalid.display()
        )),
        "{err}"
    );
    // The original appends `\n]\n}\n` and truncates it again; never touch it.
    assert_eq!(snapshot(&invalid), before);
}

#[test]
fn serves_the_trace_once_with_perfetto_headers_then_exits() {
    let dir = tempfile::tempdir().unwrap();
    // A file name that needs encoding in the link.
    let trace = dir.path().join("my run #1.json");
    std::fs::copy(testdata("trace.json"), &trace).unwrap();
    std::fs::write(dir.path().join("secret.txt"), "not for Perfetto").unwrap();
    let before = snapshot(&trace);
    let mut server = start(&["-t", path(&trace)]);
    let url = server.perfetto_url.clone().unwrap();
    let port = server.trace_port();
    assert_eq!(
        url,
        format!("https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/my%20run%20%231.json")
    );
    // Only that one file: not its directory, not other files.
    for target in [
        "/secret.txt",
        "/",
        "/../../etc/passwd",
        "/%2E%2E/secret.txt",
    ] {
        let response = get(port, target);
        assert_eq!(response.status, 404, "{target}");
        assert_eq!(
            response.header("access-control-allow-origin"),
            Some("https://ui.perfetto.dev")
        );
    }
    assert_eq!(request(port, "POST", "/my%20run%20%231.json").status, 405);
    let preflight = request(port, "OPTIONS", "/my%20run%20%231.json");
    assert_eq!(preflight.status, 204);
    assert!(
        server.is_running(),
        "stray requests must not end the one-shot server"
    );
    let response = get(port, "/my%20run%20%231.json");
    assert_eq!(response.status, 200);
    assert_eq!(
        response.header("access-control-allow-origin"),
        Some("https://ui.perfetto.dev")
    );
    assert_eq!(response.header("cache-control"), Some("no-cache"));
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(response.body, before.0);
    let (code, out) = server.wait();
    assert_eq!(code, Some(0));
    assert!(out.contains("has been served"), "{out}");
    assert_eq!(snapshot(&trace), before);
}

#[test]
fn a_truncated_trace_is_repaired_in_memory_and_never_modified() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("cut.json");
    std::fs::copy(testdata("trace-truncated.json"), &trace).unwrap();
    let before = snapshot(&trace);
    let server = start(&["-t", path(&trace)]);
    assert!(
        server.lines[0].starts_with(&format!("Trace file {} is truncated", trace.display())),
        "{:?}",
        server.lines
    );
    let response = get(server.trace_port(), "/cut.json");
    assert_eq!(response.status, 200);
    let served: serde_json::Value = serde_json::from_slice(&response.body)
        .unwrap_or_else(|e| panic!("served trace is not JSON: {e}"));
    // Every complete event kept (the metadata event and three kernels).
    assert_eq!(served["traceEvents"].as_array().unwrap().len(), 4);
    let complete = std::fs::read(testdata("trace.json")).unwrap();
    assert_eq!(response.body, complete);
    let (code, _) = server.wait();
    assert_eq!(code, Some(0));
    assert_eq!(snapshot(&trace), before);
}

#[test]
fn serves_the_trace_and_the_charts_together_until_ctrl_c() {
    let trace = testdata("trace.json");
    let metrics = testdata("metrics3.csv");
    let options = testdata("options.txt");
    let before = snapshot(&trace);
    let server = start(&[
        "-t",
        path(&trace),
        "-m",
        path(&metrics),
        "-f",
        path(&options),
    ]);
    assert!(server
        .lines
        .iter()
        .any(|l| l.starts_with("Serving charts on http://")));
    let trace_port = server.trace_port();
    // With -m the trace stays available (a reload of the Perfetto tab).
    for _ in 0..2 {
        let response = get(trace_port, "/trace.json");
        assert_eq!(response.status, 200);
        assert_eq!(response.body, before.0);
    }
    // The links in the trace open charts.
    let response = get(server.port(), &link(MAIN, 7));
    assert_eq!(response.status, 200);
    assert_eq!(pdf_pages(&response.body), 3);
    let (code, out) = server.interrupt();
    assert_eq!(code, Some(0));
    assert_eq!(out, "Goodbye!\n");
    assert_eq!(snapshot(&trace), before);
}

/// Links written between 2024-08 and 2025-04 use https (docs/formats.md#trace-json-metrics-link):
/// the chart server then runs with TLS, like the original's `-p` hand-off.
#[test]
fn https_links_start_the_tls_chart_server() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("old.json");
    let text = std::fs::read_to_string(testdata("trace.json")).unwrap();
    std::fs::write(
        &trace,
        text.replace("http://localhost:8000/", "https://localhost:8000/"),
    )
    .unwrap();
    let stalls = testdata("stalls.csv");
    let dump = testdata("dump");
    let server = start(&[
        "-t",
        path(&trace),
        "-m",
        path(&stalls),
        "-s",
        path(&dump),
        "-n",
        "3",
    ]);
    assert!(
        server
            .lines
            .iter()
            .any(|l| l.starts_with("Serving charts on https://")),
        "{:?}",
        server.lines
    );
    assert!(server
        .lines
        .contains(&"Generating a self-signed certificate...".to_string()));
}

#[test]
fn opens_a_browser_only_when_one_is_available() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let opened = dir.path().join("opened.txt");
    // The fake browser writes the link under a temporary name and renames
    // it: `opened.txt` appears only once it holds the whole link. (Writing
    // it in place let the test read the file between its creation and the
    // write, and see "" instead of the link on a busy machine.)
    let fake = bin.join("xdg-open");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho \"$1\" > '{opened}.tmp' && mv '{opened}.tmp' '{opened}'\n",
            opened = opened.display()
        ),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&fake, permissions).unwrap();
    let trace = testdata("trace.json");
    let path_var = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let args = ["--trace-port", "0", "-t", path(&trace)];
    // No display: the link is only printed. uniview decides before it
    // serves, so once the one-shot server has sent the trace and exited,
    // its whole stdout shows whether it opened a browser (no sleep needed).
    let server = Server::start_with_env(UNIVIEW, &args, &[("PATH", &path_var)], |s| {
        s.perfetto_url.is_some()
    });
    assert_eq!(get(server.trace_port(), "/trace.json").status, 200);
    let lines = server.lines.clone();
    let (code, rest) = server.wait();
    assert_eq!(code, Some(0));
    assert!(
        !lines.iter().any(|l| l.contains("Opened"))
            && !rest.contains("Opened the trace in the browser"),
        "{lines:?} {rest}"
    );
    assert!(!opened.exists());
    // A display and xdg-open: the Perfetto link is opened.
    let server = Server::start_with_env(
        UNIVIEW,
        &args,
        &[("PATH", &path_var), ("DISPLAY", ":99")],
        |s| {
            s.lines
                .iter()
                .any(|l| l == "Opened the trace in the browser")
        },
    );
    let url = server.perfetto_url.clone().unwrap();
    // xdg-open runs beside uniview; on a busy machine it may take a while.
    let start = std::time::Instant::now();
    while !opened.exists() && start.elapsed() < PATIENCE {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        std::fs::read_to_string(&opened)
            .unwrap_or_else(|e| panic!("the fake browser did not run within {PATIENCE:?}: {e}"))
            .trim(),
        url
    );
}

/// A `.pftrace` timeline skips the JSON check and repair (only the empty
/// check) and is served byte for byte (docs/uniview.md#pftrace).
#[test]
fn a_pftrace_is_served_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("chrome_trace.pftrace");
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/tracestat/gen-pftrace/python.100020.0.pftrace");
    std::fs::copy(&source, &trace).unwrap();
    let before = snapshot(&trace);
    let server = start(&["-t", path(&trace)]);
    let response = get(server.trace_port(), "/chrome_trace.pftrace");
    assert_eq!(response.status, 200);
    assert_eq!(
        response.header("content-type"),
        Some("application/octet-stream")
    );
    assert_eq!(response.body, before.0);
    let (code, _) = server.wait();
    assert_eq!(code, Some(0));
    assert_eq!(snapshot(&trace), before);
    // Not JSON, yet not refused; an empty one is.
    let empty = dir.path().join("empty.pftrace");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(
        uniview_fails(&["-t", path(&empty)]),
        format!("uniview: {}: trace file is empty\n", empty.display())
    );
}

#[test]
fn a_gzipped_kineto_trace_is_served_gzip_encoded() {
    // PyTorch profiler traces come gzipped (docs/uniview.md#gzip): served
    // as they are, the browser inflates them.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("rank0.pt.trace.json.gz");
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/kineto/recorded/planted/rank0.pt.trace.json.gz");
    std::fs::copy(&source, &trace).unwrap();
    let before = snapshot(&trace);
    let server = start(&["-t", path(&trace)]);
    let response = get(server.trace_port(), "/rank0.pt.trace.json.gz");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(response.header("content-encoding"), Some("gzip"));
    assert_eq!(response.body, before.0);
    let (code, _) = server.wait();
    assert_eq!(code, Some(0));
    assert_eq!(snapshot(&trace), before);
}

/// A gzipped trace followed by other bytes (padding) is served inflated,
/// whole, with one warning naming the bytes (docs/uniview.md#gzip); the
/// file is left as it was.
#[test]
fn a_gzipped_trace_with_bytes_after_it_is_served_inflated_with_a_warning() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("rank0.pt.trace.json.gz");
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/kineto/recorded/planted/rank0.pt.trace.json.gz");
    let mut bytes = std::fs::read(&source).unwrap();
    let gzip_len = bytes.len();
    let mut inflated = Vec::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_end(&mut inflated)
        .unwrap();
    bytes.extend_from_slice(&[0u8; 100]);
    std::fs::write(&trace, &bytes).unwrap();
    let before = snapshot(&trace);
    let server = start(&["-t", path(&trace)]);
    let response = get(server.trace_port(), "/rank0.pt.trace.json.gz");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-encoding"), None);
    assert!(response.body == inflated, "the whole trace, inflated");
    let (code, _, err) = server.wait_with_stderr();
    assert_eq!(code, Some(0));
    assert_eq!(
        err,
        format!(
            "uniview: warning: {}: 100 bytes after the end of the gzip data at byte {gzip_len} \
             (zero bytes); ignored; serving it inflated\n",
            trace.display()
        )
    );
    assert_eq!(snapshot(&trace), before);
}

/// `--result-dir DIR [--ranks ...]` (docs/uniview.md#result-dir): the
/// original's argument errors (exit 2), its messages, discovery through
/// `unitrace_core::result_dir`.
#[test]
fn result_dir_finds_the_trace_with_the_original_messages() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let run = |args: &[&str]| {
        Command::new(UNIVIEW)
            .args(["--trace-port", "0", "--port", "0", "--no-browser"])
            .args(args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .unwrap()
    };
    let usage = |args: &[&str], message: &str| {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(message), "{args:?}: {err}");
    };
    usage(
        &["--result-dir", "/nonexistent/r"],
        "Result directory '/nonexistent/r' does not exist",
    );
    usage(
        &["--result-dir", path(d), "-t", "x.json"],
        "--result-dir cannot be used together with --trace",
    );
    usage(
        &["--result-dir", path(d), "-m", "m.csv"],
        "--result-dir cannot be used together with --metrics",
    );
    usage(&[], "--trace is required when --result-dir is not provided");
    usage(
        &["-t", "x.json", "--ranks", "0"],
        "--ranks can only be used with --result-dir",
    );
    // Nothing there: the original's line on stdout, exit 1.
    let out = run(&["--result-dir", path(d)]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("Trace file is missing under {}\n", d.display())
    );
    // Rank 1 has a JSON trace, rank 0 only a .pftrace: JSON is preferred.
    let r0 = d.join("rank_0.app.10");
    let r1 = d.join("rank_1.app.11");
    std::fs::create_dir_all(&r0).unwrap();
    std::fs::create_dir_all(&r1).unwrap();
    std::fs::copy(testdata("trace.json"), r1.join("chrome_trace.json")).unwrap();
    let pftrace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/tracestat/gen-pftrace/python.100020.0.pftrace");
    std::fs::copy(&pftrace, r0.join("chrome_trace.pftrace")).unwrap();
    let server = start(&["--result-dir", path(d)]);
    let json = r1.join("chrome_trace.json");
    assert_eq!(
        server.lines[0],
        format!("Using trace file: {}", json.display())
    );
    let response = get(server.trace_port(), "/chrome_trace.json");
    assert_eq!(response.body, std::fs::read(&json).unwrap());
    let (code, _) = server.wait();
    assert_eq!(code, Some(0));
    // --ranks 0: the .pftrace of rank 0, served as is.
    let server = start(&["--result-dir", path(d), "--ranks", "0"]);
    let pf = r0.join("chrome_trace.pftrace");
    assert_eq!(
        server.lines[0],
        format!("Using trace file: {}", pf.display())
    );
    let response = get(server.trace_port(), "/chrome_trace.pftrace");
    assert_eq!(response.body, std::fs::read(&pf).unwrap());
    let (code, _) = server.wait();
    assert_eq!(code, Some(0));
    // A rank without a folder is no trace.
    let out = run(&["--result-dir", path(d), "--ranks", "5"]);
    assert_eq!(out.status.code(), Some(1));
    // Two JSON traces are merged in memory and served:
    // result_dir_serves_several_traces_merged_in_memory.
}

/// Every file below `dir` (relative paths, sorted).
fn tree_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// The `metrics` link of every event of a served JSON trace, in order.
fn json_links(body: &[u8]) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap();
    v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["args"]["metrics"].as_str().map(str::to_string))
        .collect()
}

/// A two-rank JSON tree: the same trace per rank, and per rank a metric
/// file whose instance 7 has a kernel name of its own, so that an answer
/// tells which rank's file it came from.
fn two_rank_json_tree(d: &Path) {
    two_process_json_tree(d, "rank_{r}.app.{p}");
}

/// [`two_rank_json_tree`] with folders named by `pattern` (`{r}` = 0/1,
/// `{p}` = 10/11).
fn two_process_json_tree(d: &Path, pattern: &str) {
    let metrics = std::fs::read_to_string(testdata("metrics3.csv")).unwrap();
    for (rank, pid) in [(0, 10), (1, 11)] {
        let folder = d.join(
            pattern
                .replace("{r}", &rank.to_string())
                .replace("{p}", &pid.to_string()),
        );
        std::fs::create_dir_all(folder.join("metrics")).unwrap();
        std::fs::copy(testdata("trace.json"), folder.join("chrome_trace.json")).unwrap();
        let own = metrics.replace("main::{lambda(auto:1)#4}", &format!("rank{rank}_kernel"));
        std::fs::write(folder.join("metrics/metrics_0.csv"), own).unwrap();
    }
}

/// `--result-dir` with several traces (docs/uniview.md#result-dir): the
/// merge is built in memory as mergetrace builds it (rank order, every
/// event kept) and served; nothing is written into the tree; each metric
/// link carries its rank, and the chart server answers it from that rank's
/// metric file.
#[test]
fn result_dir_serves_several_traces_merged_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    two_rank_json_tree(d);
    let before = tree_files(d);
    let options = testdata("options.txt");
    let args = ["--result-dir", path(d), "-f", path(&options)];
    let mut all = vec!["--trace-port", "0", "--port", "0", "--no-browser"];
    all.extend_from_slice(&args);
    let server = Server::start(UNIVIEW, &all, |s| {
        s.perfetto_url.is_some() && s.port.is_some()
    });
    assert_eq!(
        server.lines[0],
        format!(
            "Multiple chrome_trace.json files found under {}",
            d.display()
        )
    );
    assert!(
        server.lines[1].starts_with("Merged 2 trace files in memory as combined_trace.json ("),
        "{:?}",
        server.lines
    );
    assert!(server
        .perfetto_url
        .as_deref()
        .unwrap()
        .ends_with("/combined_trace.json"));
    let response = get(server.trace_port(), "/combined_trace.json");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/json"));
    // The events of rank 0 then rank 1, each link tagged with its rank.
    let input = std::fs::read(testdata("trace.json")).unwrap();
    let original = json_links(&input);
    assert_eq!(original.len(), 3);
    let served = json_links(&response.body);
    let expected: Vec<String> = [0, 1]
        .iter()
        .flat_map(|r| original.iter().map(move |l| format!("{l}?rank={r}")))
        .collect();
    assert_eq!(served, expected);
    let events = |b: &[u8]| {
        let v: serde_json::Value = serde_json::from_slice(b).unwrap();
        v["traceEvents"].as_array().unwrap().len()
    };
    assert_eq!(events(&response.body), 2 * events(&input));
    // A link of rank 1 reaches rank 1's file, of rank 0 rank 0's.
    let link_path = |l: &str| l.strip_prefix("http://localhost:8000").unwrap().to_string();
    let rank1 = link_path(&expected[3]);
    let page = get(server.port(), &format!("{rank1}&format=html"));
    assert_eq!(page.status, 200, "{}", page.text());
    assert!(page.text().contains("rank1_kernel"), "{}", page.text());
    assert!(!page.text().contains("rank0_kernel"));
    let page = get(
        server.port(),
        &format!("{}&format=html", link_path(&expected[0])),
    );
    assert!(page.text().contains("rank0_kernel"), "{}", page.text());
    // A rank without metric files, a device of none.
    let page = get(server.port(), &rank1.replace("rank=1", "rank=5"));
    assert_eq!(page.status, 404);
    assert_eq!(
        page.text(),
        "No metric file of rank 5 in the result directory"
    );
    let page = get(server.port(), &format!("{rank1}&device=3"));
    assert_eq!(page.status, 404);
    // Without a rank (an untagged link) the first file that has it answers.
    let untagged = rank1.split('?').next().unwrap().to_string();
    let page = get(server.port(), &format!("{untagged}?format=html"));
    assert!(page.text().contains("rank0_kernel"));
    // perfdashboard's URL is routed the same way by its rank key.
    let gid = untagged.rsplit('/').next().unwrap();
    let page = get(server.port(), &format!("/perfdashboard?gid={gid}&rank=1"));
    assert_eq!(page.status, 200, "{}", page.text());
    assert!(page.text().contains("rank1_kernel"), "{}", page.text());
    assert!(!page.text().contains("rank0_kernel"));
    let page = get(server.port(), &format!("/perfdashboard?gid={gid}&rank=0"));
    assert!(page.text().contains("rank0_kernel"), "{}", page.text());
    let (code, _) = server.interrupt();
    assert_eq!(code, Some(0));
    // Nothing written into the result dir (uniview.py writes combined_trace.json there).
    assert_eq!(tree_files(d), before);
    // Only rank 0 has metrics: a link of rank 1 is not answered from rank 0's file.
    std::fs::remove_dir_all(d.join("rank_1.app.11/metrics")).unwrap();
    let server = Server::start(UNIVIEW, &all, |s| {
        s.perfetto_url.is_some() && s.port.is_some()
    });
    let page = get(server.port(), &format!("{rank1}&format=html"));
    assert_eq!(page.status, 404);
    assert_eq!(
        page.text(),
        "No metric file of rank 1 in the result directory"
    );
    let page = get(
        server.port(),
        &format!("{}&format=html", link_path(&expected[0])),
    );
    assert!(page.text().contains("rank0_kernel"), "{}", page.text());
    let (code, _) = server.interrupt();
    assert_eq!(code, Some(0));
}

/// A merge larger than `--max-merge-mib` is refused with one line naming
/// the way out (mergetrace -o, then uniview -t).
#[test]
fn result_dir_merge_beyond_the_size_cap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    two_rank_json_tree(d);
    let err = uniview_fails(&[
        "--result-dir",
        path(d),
        "--max-merge-mib",
        "0",
        "--no-browser",
    ]);
    assert_eq!(
        err,
        format!(
            "uniview: {0}: the 2 traces hold 1 MiB, more than the 0 MiB uniview merges in memory (--max-merge-mib): merge them with `mergetrace --result-dir {0} -o merged.json` and run `uniview -t merged.json`\n",
            d.display()
        )
    );
    assert!(!tree_files(d).iter().any(|f| f.contains("combined")));
}

/// `.pftrace` trees: the packets of every rank in rank order (`--ranks 1 0`
/// keeps the order given), flow ids kept apart per rank, metric links
/// tagged with their rank; the served name is uniview.py's.
#[test]
fn result_dir_merges_pftrace_traces_in_memory() {
    use unitrace_core::pftrace::{AnnotationValue, PacketData, PacketReader};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/uniview-resdir/pftrace");
    let mut inputs = Vec::new();
    for entry in std::fs::read_dir(&source).unwrap() {
        let folder = entry.unwrap().path();
        let target = d.join(folder.file_name().unwrap());
        std::fs::create_dir_all(&target).unwrap();
        for f in std::fs::read_dir(&folder).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, target.join(f.file_name().unwrap())).unwrap();
            if f.extension().is_some_and(|e| e == "pftrace") {
                inputs.push(target.join(f.file_name().unwrap()));
            }
        }
    }
    inputs.sort();
    let before = tree_files(d);
    let server = start(&["--result-dir", path(d), "--ranks", "1", "0"]);
    assert_eq!(
        server.lines[0],
        format!(
            "Multiple chrome_trace.pftrace files found under {} for ranks [1, 0]",
            d.display()
        )
    );
    let response = get(server.trace_port(), "/combined_trace_ranks_0_1.pftrace");
    assert_eq!(response.status, 200);
    let (code, _) = server.wait();
    assert_eq!(code, Some(0));
    assert_eq!(tree_files(d), before);
    // Per packet: (links, flow ids) of the served trace against the inputs
    // in the order 1, 0.
    type Seen = (Vec<String>, Vec<u64>, usize);
    let read = |bytes: &[u8]| -> Seen {
        let mut reader = PacketReader::new(bytes);
        let (mut links, mut flows, mut packets) = (Vec::new(), Vec::new(), 0);
        while let Some(rec) = reader.next_record().unwrap() {
            packets += 1;
            if let PacketData::TrackEvent(e) = rec.decode().unwrap().data {
                flows.extend(e.flow_ids());
                if let Some(AnnotationValue::Str(l)) = e.annotation(b"metrics") {
                    links.push(String::from_utf8_lossy(l).into_owned());
                }
            }
        }
        assert!(reader.summary().truncation.is_none());
        (links, flows, packets)
    };
    let served = read(&response.body);
    let rank1 = read(&std::fs::read(&inputs[1]).unwrap());
    let rank0 = read(&std::fs::read(&inputs[0]).unwrap());
    assert_eq!(served.2, rank1.2 + rank0.2);
    assert!(!rank0.0.is_empty() && !rank0.1.is_empty());
    let links: Vec<String> = (rank1.0.iter().map(|l| format!("{l}?rank=1")))
        .chain(rank0.0.iter().map(|l| format!("{l}?rank=0")))
        .collect();
    assert_eq!(served.0, links);
    // Input 0 (rank 1) keeps its flow ids; input 1 (rank 0) gets 1 << 32 added.
    let flows: Vec<u64> = rank1
        .1
        .iter()
        .copied()
        .chain(rank0.1.iter().map(|f| (1u64 << 32) | f))
        .collect();
    assert_eq!(served.1, flows);
}

/// Processes outside `rank_<r>.` folders (a non-MPI tree): their links are
/// tagged with `process=<app>.<pid>` and reach their own folder's metrics.
#[test]
fn result_dir_without_ranks_routes_links_by_process_folder() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    two_process_json_tree(d, "app{r}.{p}");
    let options = testdata("options.txt");
    let all = [
        "--trace-port",
        "0",
        "--port",
        "0",
        "--no-browser",
        "--result-dir",
        path(d),
        "-f",
        path(&options),
    ];
    let server = Server::start(UNIVIEW, &all, |s| {
        s.perfetto_url.is_some() && s.port.is_some()
    });
    let response = get(server.trace_port(), "/combined_trace.json");
    let links = json_links(&response.body);
    assert_eq!(links.len(), 6);
    assert!(links[..3].iter().all(|l| l.ends_with("?process=app0.10")));
    assert!(links[3..].iter().all(|l| l.ends_with("?process=app1.11")));
    let link = links[3].strip_prefix("http://localhost:8000").unwrap();
    let page = get(server.port(), &format!("{link}&format=html"));
    assert_eq!(page.status, 200, "{}", page.text());
    assert!(page.text().contains("rank1_kernel"), "{}", page.text());
    // The page's own links stay in that folder (docs/uniview.md#result-dir-links):
    // "All kernels" is its dashboard, which shows its kernel.
    let home = "/perfdashboard?process=app1.11&amp;device=0";
    assert!(
        page.text().contains(&format!(
            "<a href=\"/\">Result-dir index</a><a href=\"{home}\">All kernels</a>"
        )),
        "{}",
        page.text()
    );
    let own = get(server.port(), &home.replace("&amp;", "&"));
    assert_eq!(own.status, 200);
    assert!(own.text().contains("rank1_kernel") && !own.text().contains("rank0_kernel"));
    let link = links[0].strip_prefix("http://localhost:8000").unwrap();
    let page = get(server.port(), &format!("{link}&format=html"));
    assert!(page.text().contains("rank0_kernel"), "{}", page.text());
    let (code, _) = server.interrupt();
    assert_eq!(code, Some(0));
}
