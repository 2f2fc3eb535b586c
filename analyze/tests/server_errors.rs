//! Error answers of the chart servers (docs/robustness.md#servers): a
//! malformed `rank=`/`device=` is a 400 on every path, never another
//! rank's data; every error body is HTML-escaped and every answer says
//! `X-Content-Type-Options: nosniff`; a metric the file lacks (a preset's
//! metric another device model does not count) is a 404 naming it.

use std::path::{Path, PathBuf};

use crate::server_common::*;

const UNIVIEW: &str = env!("CARGO_BIN_EXE_uniview");
const RANKS: [&str; 2] = ["rank_0.app.100", "rank_1.app.101"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/uniview-resdir")
}

/// Two ranks with the same kernels and instance ids, different numbers.
fn result_dir(d: &Path) {
    for rank in RANKS {
        let metrics = d.join(rank).join("metrics");
        std::fs::create_dir_all(&metrics).unwrap();
        std::fs::copy(
            fixtures()
                .join("metrics")
                .join(rank)
                .join("metrics/metrics_0.csv"),
            metrics.join("metrics_0.csv"),
        )
        .unwrap();
        std::fs::copy(
            testdata("trace.json"),
            d.join(rank).join("chrome_trace.json"),
        )
        .unwrap();
    }
}

fn uniview(d: &Path) -> Server {
    let options = testdata("options.txt");
    let args = [
        "--trace-port",
        "0",
        "--port",
        "0",
        "--no-browser",
        "--result-dir",
        d.to_str().unwrap(),
        "-f",
        options.to_str().unwrap(),
    ];
    Server::start(UNIVIEW, &args, |s| {
        s.perfetto_url.is_some() && s.port.is_some()
    })
}

fn assert_escaped_error(response: &Response, status: u16, text: &str) {
    assert_eq!(response.status, status, "{}", response.text());
    assert_eq!(response.text(), text);
    assert_eq!(response.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(
        response.header("content-type"),
        Some("text/html; charset=utf-8")
    );
}

#[test]
fn a_malformed_rank_or_device_is_a_400_on_every_path() {
    let dir = tempfile::tempdir().unwrap();
    result_dir(dir.path());
    let server = uniview(dir.path());
    let port = server.port();
    // An instance id of rank 1's file.
    let good = get(port, "/perfdashboard?gid=3&rank=1");
    assert_eq!(good.status, 200, "{}", good.text());
    assert_eq!(good.header("x-content-type-options"), Some("nosniff"));
    let cases = [
        ("abc", "abc"),
        ("-1", "-1"),
        ("", ""),
        ("4294967296", "4294967296"),
        ("%2B1", "+1"),
        (
            "%3Cscript%3Ealert(1)%3C/script%3E",
            "&lt;script&gt;alert(1)&lt;/script&gt;",
        ),
    ];
    for key in ["rank", "device"] {
        for (raw, shown) in cases {
            let want = format!("Invalid {key}={shown}: a {key} is a number from 0 to 4294967295");
            for target in [
                format!("/perfdashboard?gid=1&{key}={raw}"),
                format!("/perfdashboard?{key}={raw}&kernel=k"),
                format!("/%22k%22/1?format=html&{key}={raw}"),
            ] {
                let response = get(port, &target);
                assert_escaped_error(&response, 400, &want);
            }
        }
    }
    // A key without `=` is an empty value.
    let response = get(port, "/perfdashboard?gid=1&rank");
    assert_escaped_error(
        &response,
        400,
        "Invalid rank=: a rank is a number from 0 to 4294967295",
    );
}

#[test]
fn error_bodies_are_escaped_and_never_sniffed() {
    let input = testdata("metrics3.csv");
    let server = Server::analyze(&[
        "-q",
        "-m",
        "XVE_ACTIVE[%]",
        "-y",
        "%",
        input.to_str().unwrap(),
    ]);
    let port = server.port();
    let response = get(port, "/%22%3Cscript%3Ealert(1)%3C/script%3E%22/1");
    assert_escaped_error(
        &response,
        404,
        "No instance with GlobalInstanceId 1 of kernel &lt;script&gt;alert(1)&lt;/script&gt;: the file has 0 instances of that kernel",
    );
    // A malformed key on a single-file server too.
    let response = get(port, "/perfdashboard?gid=7&device=x%22");
    assert_escaped_error(
        &response,
        400,
        "Invalid device=x&quot;: a device is a number from 0 to 4294967295",
    );
    let response = get(port, "/favicon.ico");
    assert_eq!(response.header("x-content-type-options"), Some("nosniff"));
}

#[test]
fn a_preset_metric_the_file_lacks_is_a_404_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata("metrics3.csv")).unwrap();
    // A device model without XVE_STALL[%], which pvc/ComputeBasic.txt's
    // first chart asks for.
    assert!(text.contains("XVE_STALL[%]"));
    let input = dir.path().join("m.csv");
    std::fs::write(&input, text.replace("XVE_STALL[%]", "XVE_OTHER[%]")).unwrap();
    let server = Server::analyze(&["-q", "-f", "pvc/ComputeBasic.txt", input.to_str().unwrap()]);
    let response = get(
        server.port(),
        &link(
            "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]",
            7,
        ),
    );
    assert_escaped_error(
        &response,
        404,
        "No metric data for XVE_STALL[%]. Is the metric name correctly spelled?",
    );
}
