//! `analyze -q/-p` end to end: the real binary on a free port, HTTP over
//! std::net (docs/compatibility.md#analyze-server, docs/robustness.md#servers).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

use crate::server_common::*;

const MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";
const CONV: &str = "gen_conv[SIMD16 {28; 28; 8} {16; 1; 1}]";
const NOTHING: &str = "No metric data collected or no metrics specified";

fn metric_server() -> Server {
    let options = testdata("options.txt");
    let input = testdata("metrics3.csv");
    Server::analyze(&[
        "-q",
        "-f",
        options.to_str().unwrap(),
        input.to_str().unwrap(),
    ])
}

fn assert_pdf(response: &Response, pages: usize) {
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.header("content-type"), Some("application/pdf"));
    assert!(response.body.starts_with(b"%PDF-"), "not a PDF");
    assert_eq!(pdf_pages(&response.body), pages);
}

#[test]
fn prints_the_original_notices_then_serves() {
    let server = metric_server();
    assert_eq!(server.lines[0], "No output to file");
    assert_eq!(
        server.lines[1],
        "Options -o/--output, -r/--report, -k/--kernel, -i/--instance and -d/--device are ignored if they are present"
    );
}

#[test]
fn answers_a_unitrace_link_with_the_instance_pdf() {
    let server = metric_server();
    // Two -m sets and one -b set: three pages, like the original.
    assert_pdf(&get(server.port(), &link(MAIN, 7)), 3);
    assert_pdf(&get(server.port(), &link(CONV, 19)), 3);
    // The kernel of the link is not used, only the instance (docs/compatibility.md#analyze-server).
    assert_pdf(&get(server.port(), &link("anything", 25)), 3);
}

/// docs/compatibility.md#analyze-quirk-8: with three device sections the original cannot
/// reach device 1; every section is indexed here.
#[test]
fn every_device_section_is_reachable() {
    let server = metric_server();
    for id in [8, 20, 26, 38, 9, 39] {
        assert_pdf(&get(server.port(), &link(MAIN, id)), 3);
    }
}

#[test]
fn html_format_is_the_instance_dashboard() {
    // docs/analyze.md#dashboard; the page's numbers: dashboard.rs.
    let server = metric_server();
    let response = get(server.port(), &format!("{}?format=html", link(MAIN, 26)));
    assert_eq!(response.status, 200);
    assert_eq!(
        response.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = response.text();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("data-gid=\"26\""));
    assert!(html.contains("XVE_ACTIVE[%]"), "the counters are offered");
    assert!(html.contains("GlobalInstanceId 26, 4 samples"), "{html}");
    // Self-contained: nothing loaded from the network.
    assert!(!html.contains("<script src") && !html.contains("src=\"http"));
}

#[test]
fn bad_requests_get_the_original_text_with_real_status_codes() {
    let server = metric_server();
    let port = server.port();
    // (`/` is the index page of a metric file: server_index.rs.)
    for target in [
        "/k",
        "/k/",
        "/k/abc",
        "/k/1x",
        "/../../etc/passwd",
        "/%22k%22/-3",
    ] {
        let response = get(port, target);
        assert_eq!(response.status, 400, "{target}");
        assert_eq!(response.text(), "Invalid", "{target}");
    }
    // An unknown instance names itself and the kernel's instance count
    // over all device sections (3 here, 2 instances each)
    // (docs/compatibility.md#analyze-server-status).
    let response = get(port, &link(MAIN, 12345));
    assert_eq!(response.status, 404);
    assert_eq!(
        response.text(),
        format!("No instance with GlobalInstanceId 12345 of kernel {MAIN}: the file has 6 instances of that kernel")
    );
    let response = get(port, &link("nosuch", 1));
    assert_eq!(
        response.text(),
        "No instance with GlobalInstanceId 1 of kernel nosuch: the file has 0 instances of that kernel"
    );
    let response = get(port, "/k/99999999999999999999999999");
    assert_eq!(response.status, 404);
    assert_eq!(get(port, "/favicon.ico").status, 404);
    let response = get(port, &format!("{}?format=png", link(MAIN, 7)));
    assert_eq!(response.status, 400);
    assert!(response.text().contains("format=html"));
    for method in ["POST", "PUT", "DELETE", "OPTIONS", "BREW"] {
        let response = request(port, method, &link(MAIN, 7));
        assert_eq!(response.status, 405, "{method}");
        assert_eq!(response.header("allow"), Some("GET, HEAD"));
    }
    let head = request(port, "HEAD", &link(MAIN, 7));
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    // Still serving.
    assert_pdf(&get(port, &link(MAIN, 7)), 3);
}

#[test]
fn long_urls_garbage_and_half_closed_connections_do_not_stop_it() {
    let server = metric_server();
    let port = server.port();
    // A 10 kB kernel name: answered (no such instance).
    let long = format!("/{}/7000", "%41".repeat(10 * 1024 / 3));
    assert_eq!(get(port, &long).status, 404);
    // A 10 kB instance component: still just a request for nothing.
    let long_id = format!("/k/{}", "9".repeat(10 * 1024));
    assert_eq!(get(port, &long_id).status, 404);
    // A 1 MB request line: refused by the head limit, connection closed.
    let huge = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(1 << 20));
    let answer = exchange(port, huge.as_bytes()).unwrap_or_default();
    if let Some(response) = parse_response(&answer) {
        assert!(response.status >= 400, "{}", response.status);
    }
    // Not HTTP at all.
    let answer = exchange(port, b"\x16\x03\x01\x02\x00hello\r\n\r\n").unwrap_or_default();
    if let Some(response) = parse_response(&answer) {
        assert_eq!(response.status, 400);
    }
    // Half-closed connections: a partial request line, a partial header,
    // nothing at all. Each is closed by the server.
    assert!(half_close(port, b"GET /k/7 HT"));
    assert!(half_close(port, b"GET /k/7 HTTP/1.1\r\nHost: x\r\n"));
    assert!(half_close(port, b""));
    // A client that connects and says nothing while others are served.
    let silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    assert_pdf(&get(port, &link(MAIN, 7)), 3);
    drop(silent);
    assert_pdf(&get(port, &link(MAIN, 8)), 3);
}

#[test]
fn serves_200_concurrent_clients() {
    let server = metric_server();
    let port = server.port();
    let clients: Vec<_> = (0..200)
        .map(|i| {
            std::thread::spawn(move || {
                // Mixed: cheap errors and real charts.
                let target = match i % 4 {
                    0 => link(MAIN, 7),
                    1 => "/k/abc".to_string(),
                    2 => link(MAIN, 424242),
                    _ => format!("{}?format=html", link(CONV, 20)),
                };
                let raw = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
                let bytes = exchange(port, raw.as_bytes()).expect("answered");
                parse_response(&bytes).expect("an HTTP answer").status
            })
        })
        .collect();
    let statuses: Vec<u16> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    assert_eq!(statuses.iter().filter(|&&s| s == 200).count(), 100);
    assert_eq!(statuses.iter().filter(|&&s| s == 400).count(), 50);
    assert_eq!(statuses.iter().filter(|&&s| s == 404).count(), 50);
    assert_pdf(&get(port, &link(MAIN, 9)), 3);
}

/// Slowloris (docs/robustness.md#servers): 300 connections that never send a head (more than
/// the 256 connection slots) must not keep a well-behaved client waiting
/// for the 10 s head time-out: the oldest idle ones are dropped.
#[test]
fn idle_connections_do_not_block_new_clients() {
    let server = metric_server();
    let port = server.port();
    let mut idle = Vec::new();
    for i in 0..300 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        if i % 2 == 0 {
            // Half send the start of a head and stop there.
            let _ = s.write_all(b"GET / HT");
        }
        idle.push(s);
    }
    let started = std::time::Instant::now();
    assert_pdf(&get(port, &link(MAIN, 7)), 3);
    let waited = started.elapsed();
    assert!(
        waited < Duration::from_secs(5),
        "a normal request waited {waited:?} behind idle connections"
    );
    drop(idle);
}

#[test]
fn keep_alive_connections_get_several_answers() {
    let server = metric_server();
    let mut stream = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let request = "GET /k/abc HTTP/1.1\r\nHost: x\r\n\r\n";
    stream
        .write_all(
            format!(
                "{request}{request}GET /k/abc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    assert_eq!(out.matches("HTTP/1.1 400").count(), 3);
}

#[test]
fn misspelt_metric_is_a_404_with_the_original_text() {
    let input = testdata("metrics3.csv");
    let server = Server::analyze(&[
        "-q",
        "-m",
        "XVE_ACTIVE[%], NoSuch[x]",
        "-y",
        "Y",
        input.to_str().unwrap(),
    ]);
    let response = get(server.port(), &link(MAIN, 7));
    // The file has no such metric: nothing to show, named
    // (docs/compatibility.md#analyze-server-status).
    assert_eq!(response.status, 404);
    assert_eq!(
        response.text(),
        "No metric data for  NoSuch[x]. Is the metric name correctly spelled?"
    );
}

#[test]
fn without_metrics_nothing_is_drawn() {
    let input = testdata("metrics3.csv");
    let server = Server::analyze(&["-q", input.to_str().unwrap()]);
    let response = get(server.port(), &link(MAIN, 7));
    assert_eq!(response.status, 404);
    assert_eq!(response.text(), NOTHING);
}

#[test]
fn query_files_draw_one_row_instances() {
    let input = testdata("query.csv");
    let server = Server::analyze(&[
        "-q",
        "-m",
        "GpuTime[ns]",
        "-y",
        "ns",
        input.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&input).unwrap();
    // The first data row's instance id.
    let row = text.lines().find(|l| l.starts_with('"')).unwrap();
    let id: u64 = row
        .rsplit("\",")
        .next()
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_pdf(&get(server.port(), &link("k", id)), 1);
}

#[test]
fn stall_server_cuts_the_shape_and_draws_stall_charts() {
    let input = testdata("stalls.csv");
    let server = Server::analyze(&["-q", input.to_str().unwrap()]);
    let port = server.port();
    // The trace link carries the shape; the stall CSV does not.
    let response = get(
        port,
        &link(
            "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]",
            3,
        ),
    );
    assert_eq!(response.status, 200, "{}", response.text());
    assert_eq!(response.header("content-type"), Some("application/pdf"));
    assert!(pdf_pages(&response.body) >= 1);
    let response = get(
        port,
        &format!(
            "{}?format=html",
            link("triton_poi_fused_add_0[SIMD32 {2048; 1; 1} {128; 1; 1}]", 5)
        ),
    );
    assert_eq!(response.status, 200);
    // The HTML view is the kernel's stall dashboard page
    // (docs/analyze.md#stall-dashboard).
    assert!(response.text().contains("<h2>triton_poi_fused_add_0</h2>"));
    assert!(response.text().contains("SBID (DRAM latency)"));
    let response = get(port, &link("unknown_kernel[SIMD16 {1; 1; 1} {1; 1; 1}]", 1));
    assert_eq!(response.status, 404);
    assert_eq!(response.text(), "No metric data for kernel unknown_kernel");
    // No shape: the name is kept whole (the original cuts `operator[]`).
    let response = get(port, &link("Foo::operator[]", 1));
    assert_eq!(response.text(), "No metric data for kernel Foo::operator[]");
}

#[test]
fn stall_server_with_missing_dump_folder_says_so() {
    let input = testdata("stalls.csv");
    let server = Server::analyze(&["-q", "-s", "/nonexistent/dump", input.to_str().unwrap()]);
    let response = get(server.port(), &link("main::{lambda(auto:1)#4}", 1));
    assert_eq!(response.status, 500);
    assert_eq!(
        response.text(),
        "Shader dump folder /nonexistent/dump does not exist"
    );
}

#[test]
fn ctrl_c_says_goodbye_and_exits_0() {
    let server = metric_server();
    let (code, out) = server.interrupt();
    assert_eq!(code, Some(0));
    assert_eq!(out, "Goodbye!\n");
}

fn analyze_fails(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_analyze"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{args:?}");
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn checks_options_before_serving_with_the_original_messages() {
    let input = testdata("metrics3.csv");
    let input = input.to_str().unwrap();
    assert_eq!(
        analyze_fails(&["-q", "-p", "--port", "0", input]),
        "analyze: Options -p and -q cannot be used at the same time\n"
    );
    assert_eq!(
        analyze_fails(&["-q", "-m", "GpuTime[ns]", "--port", "0", input]),
        "analyze: Number of metric sets does not match number of Y labels\n"
    );
    assert!(analyze_fails(&["-q", "--port", "0", "/nonexistent/in.csv"])
        .ends_with("/nonexistent/in.csv does not exist or cannot be opened\n"));
    let empty = tempfile::NamedTempFile::new().unwrap();
    let err = analyze_fails(&["-q", "--port", "0", empty.path().to_str().unwrap()]);
    assert_eq!(
        err,
        format!("analyze: File {} is empty\n", empty.path().display())
    );
    let trace = testdata("trace.json");
    let err = analyze_fails(&["-q", "--port", "0", trace.to_str().unwrap()]);
    assert!(err.contains("JSON"), "{err}");
    assert_eq!(
        analyze_fails(&["-p", "-c", "/nonexistent/c.pem", "--port", "0", input]),
        "analyze: Private key file is missing\n"
    );
    assert_eq!(
        analyze_fails(&["-p", "-e", "/nonexistent/k.pem", "--port", "0", input]),
        "analyze: Certificate file is missing\n"
    );
    assert_eq!(
        analyze_fails(&[
            "-p",
            "-c",
            "/nonexistent/c.pem",
            "-e",
            "/nonexistent/k.pem",
            "--port",
            "0",
            input
        ]),
        "analyze: Certificate file /nonexistent/c.pem does not exist\n"
    );
    // A folder given for a PEM file is named as such, not as missing.
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().to_str().unwrap();
    assert_eq!(
        analyze_fails(&["-p", "-c", folder, "-e", folder, "--port", "0", input]),
        format!("analyze: Certificate file {folder} is a directory\n")
    );
}

#[test]
fn refuses_a_port_in_use() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let input = testdata("metrics3.csv");
    let err = analyze_fails(&["-q", "--port", &port, input.to_str().unwrap()]);
    assert!(
        err.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn stall_server_with_a_dump_adds_the_report_and_leaves_the_dump_alone() {
    let input = testdata("stalls.csv");
    let dump = testdata("dump");
    let listing = |dir: &std::path::Path| {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let before = listing(&dump);
    let without = Server::analyze(&["-q", input.to_str().unwrap()]);
    let plain = get(without.port(), &link("main::{lambda(auto:1)#4}", 1));
    drop(without);
    let server = Server::analyze(&[
        "-q",
        "-s",
        dump.to_str().unwrap(),
        "-n",
        "2",
        input.to_str().unwrap(),
    ]);
    let port = server.port();
    let target = link(
        "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]",
        4,
    );
    let html = get(port, &format!("{target}?format=html")).text();
    assert!(
        html.contains("<summary>Stall report of main::{lambda(auto:1)#4}</summary>"),
        "{html}"
    );
    assert!(html.contains("Kernel: main::{lambda(auto:1)#4}"));
    assert!(html.contains("Report of Top 2 Stalls of Each Type"));
    // The PDF has the report as text pages after the chart pages.
    let pdf = get(port, &target);
    assert_eq!(pdf.status, 200);
    assert!(pdf_pages(&pdf.body) > pdf_pages(&plain.body));
    // Asked again (the report builder is reused): the same report.
    assert_eq!(get(port, &format!("{target}?format=html")).text(), html);
    assert_eq!(
        listing(&dump),
        before,
        "the dump folder must not be written to"
    );
}
