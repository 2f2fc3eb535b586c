//! uniview's `-f` and `--port` as a user meets them
//! (docs/compatibility.md#analyze-option-file): the
//! built-in preset path that `analyze -f` accepts is accepted, and a chart
//! port the trace's links do not point at gets one warning.

use std::io::Read;
use std::path::Path;

use crate::server_common::*;

const MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Starts uniview on the test trace (links at localhost:8000) and the
/// metric file with `-f config`, the charts on a free port; returns the
/// server and what it wrote on stderr once stopped.
fn serve(config: &str, check: impl FnOnce(&Server)) -> String {
    let trace = testdata("trace.json");
    let metrics = testdata("metrics3.csv");
    let args = [
        "--trace-port",
        "0",
        "--port",
        "0",
        "--no-browser",
        "-t",
        path(&trace),
        "-m",
        path(&metrics),
        "-f",
        config,
    ];
    let mut server = Server::start(env!("CARGO_BIN_EXE_uniview"), &args, |s| {
        s.perfetto_url.is_some() && s.port.is_some()
    });
    let mut stderr = server.child.stderr.take().unwrap();
    check(&server);
    let (code, _) = server.interrupt();
    assert_eq!(code, Some(0));
    let mut err = String::new();
    stderr.read_to_string(&mut err).unwrap();
    err
}

#[test]
fn builtin_preset_path_is_accepted_and_a_foreign_port_warned_once() {
    // No `pvc/` folder in the test's working directory: the built-in copy.
    assert!(!Path::new("pvc/ComputeBasic.txt").exists());
    let err = serve("pvc/ComputeBasic.txt", |server| {
        let response = get(server.port(), &link(MAIN, 7));
        assert_eq!(response.status, 200, "{}", response.text());
        assert!(pdf_pages(&response.body) > 0);
    });
    // --port 0 is not the links' 8000: one warning line.
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("uniview: warning: ")
            && lines[0].contains("the trace's metric links point at localhost:8000, but --port 0"),
        "{err}"
    );
}

#[test]
fn an_option_file_still_wins_over_the_preset() {
    let options = testdata("options.txt");
    let err = serve(path(&options), |server| {
        let response = get(server.port(), &link(MAIN, 7));
        assert_eq!(response.status, 200, "{}", response.text());
        assert_eq!(pdf_pages(&response.body), 3);
    });
    assert_eq!(err.lines().count(), 1, "{err}");
}
