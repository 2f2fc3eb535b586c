//! A real browser opens an instance page: headless Chromium (Debian
//! `chromium`, installed by scripts/test.sh) loads `?format=html` from the
//! running server and the DOM it builds must hold the charts.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::server_common::*;

const MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";

/// The DOM Chromium builds for `url` (`--dump-dom`).
pub fn chromium_dom(url: &str) -> String {
    let program = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".to_string());
    let profile = tempfile::tempdir().unwrap();
    let child = Command::new(&program)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--dump-dom", url])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => panic!(
            "this test needs headless Chromium: cannot run `{program}` ({e}). \
             Install it with `apt-get install -y chromium` (scripts/test.sh does), \
             or point the CHROMIUM variable at a Chromium binary"
        ),
    };
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("Chromium did not finish loading {url} within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "Chromium failed on {url}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn chromium_shows_the_charts_of_an_instance() {
    let options = testdata("options.txt");
    let input = testdata("metrics3.csv");
    let server = Server::analyze(&[
        "-q",
        "-f",
        options.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    let url = format!(
        "http://127.0.0.1:{}{}?format=html",
        server.port(),
        link(MAIN, 20)
    );
    let dom = chromium_dom(&url);
    // The instance's dashboard page (docs/analyze.md#dashboard), drawn by
    // its script: the five -m/-b counters selected, one chart per unit
    // ([%], [ns], [bytes]), one line per counter.
    assert_eq!(dom.matches("<svg").count(), 3, "{dom}");
    assert_eq!(dom.matches("<polyline").count(), 5, "{dom}");
    assert!(dom.contains("data-series=\"GPU_MEMORY_BYTE_READ[bytes]\""));
    assert!(dom.contains("GlobalInstanceId 20, 4 samples"));
}

#[test]
fn chromium_shows_the_stall_charts_of_a_kernel() {
    let input = testdata("stalls.csv");
    let server = Server::analyze(&["-q", input.to_str().unwrap()]);
    let url = format!(
        "http://127.0.0.1:{}{}?format=html",
        server.port(),
        link(MAIN, 1)
    );
    let dom = chromium_dom(&url);
    assert!(dom.matches("<svg").count() >= 1, "{dom}");
    assert!(dom.contains("SbidStall[Events]"));
}
