//! `GET /` of the chart server (issue 17; docs/compatibility.md#analyze-server-index-page):
//! a metric file's kernels with their instance counts, each instance linked
//! to its `?format=html` page; files without metric sections keep the
//! original's `Invalid`.

use crate::server_common::*;

const MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";
const CONV: &str = "gen_conv[SIMD16 {28; 28; 8} {16; 1; 1}]";

/// The `href`s of an HTML page.
fn links(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].replace("&amp;", "&"))
        .collect()
}

#[test]
fn index_lists_kernels_and_links_every_instance_page() {
    let options = testdata("options.txt");
    let input = testdata("metrics3.csv");
    let server = Server::analyze(&[
        "-q",
        "-f",
        options.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    let response = get(server.port(), "/");
    assert_eq!(response.status, 200);
    assert!(response
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    let html = response.text();
    // Three device sections of two instances per kernel.
    for kernel in [MAIN, CONV] {
        let row = format!(
            "<tr><td>{}</td><td class=\"n\">6</td>",
            kernel.replace('&', "&amp;")
        );
        assert!(html.contains(&row), "{kernel}: {html}");
    }
    let targets = links(&html);
    assert_eq!(targets.len(), 12, "{targets:?}");
    for target in &targets {
        assert!(target.ends_with("?format=html"), "{target}");
        let page = get(server.port(), target);
        assert_eq!(page.status, 200, "{target}: {}", page.text());
        assert!(page.text().contains("<svg"), "{target}");
    }
    // The query string does not change the answer.
    assert_eq!(get(server.port(), "/?x=1").status, 200);
}

#[test]
fn a_stall_file_index_is_the_stall_dashboard() {
    // docs/analyze.md#stall-dashboard; its numbers are checked in
    // stall_dashboard.rs.
    let input = testdata("stalls.csv");
    let server = Server::analyze(&["-q", input.to_str().unwrap()]);
    let response = get(server.port(), "/");
    assert_eq!(response.status, 200);
    let html = response.text();
    assert!(html.contains("<h1>EU Stall Sampling</h1>"), "{html}");
    assert!(html.contains("id=\"totals-table\""));
}
