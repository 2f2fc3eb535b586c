//! `GET /` of the chart server (docs/compatibility.md#analyze-server-index-page):
//! a metric file's kernels with their instance counts, each instance linked
//! to its `?format=html` page; files without metric sections keep the
//! original's `Invalid`.

use crate::server_common::*;

const MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";
const CONV: &str = "gen_conv[SIMD16 {28; 28; 8} {16; 1; 1}]";

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
    // The page's data (docs/analyze.md#dashboard-index): three device
    // sections of two instances per kernel.
    let data = inline_json(&html, "index-data");
    let kernels = data["kernels"].as_array().unwrap();
    let names: Vec<&str> = kernels
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [MAIN, CONV]);
    let mut ids = Vec::new();
    for kernel in kernels {
        assert_eq!(kernel["instances"], 6);
        ids.extend(
            kernel["ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap()),
        );
    }
    assert_eq!(ids.len(), 12, "{ids:?}");
    for id in ids {
        let page = get(server.port(), &format!("/perfdashboard?gid={id}&kernel=x"));
        assert_eq!(page.status, 200, "{id}: {}", page.text());
        assert!(page.text().contains(&format!("data-gid=\"{id}\"")), "{id}");
    }
    // The query string does not change the answer.
    assert_eq!(get(server.port(), "/?x=1").status, 200);
}

/// The JSON of `<script type="application/json" id="ID">`.
pub fn inline_json(html: &str, id: &str) -> serde_json::Value {
    let start = format!("<script type=\"application/json\" id=\"{id}\">");
    let at = html
        .find(&start)
        .unwrap_or_else(|| panic!("no {id} in {html}"))
        + start.len();
    let end = html[at..].find("</script>").unwrap();
    serde_json::from_str(&html[at..at + end]).unwrap()
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
