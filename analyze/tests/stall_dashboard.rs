//! The stall dashboard (docs/analyze.md#stall-dashboard): the chart
//! server's pages for a stall file and `analyze -o x.html` on one. The
//! expected numbers are computed here from the CSV with the `csv` crate,
//! independently of the core parser.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;

use crate::server_common::*;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/sample")
        .join(name)
}

fn two_devices() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/bad_inputs/valid/stalls_2dev.csv")
}

/// Column name -> per kernel -> sum, and per kernel -> IP -> stall events
/// (every stall column but `Active[Events]`), over every section.
struct Expected {
    sums: BTreeMap<String, BTreeMap<String, u64>>,
    ips: BTreeMap<String, BTreeMap<u64, u64>>,
}

fn expected(path: &Path) -> Expected {
    let text = std::fs::read_to_string(path).unwrap();
    let mut header: Option<Vec<String>> = None;
    let mut sums: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut ips: BTreeMap<String, BTreeMap<u64, u64>> = BTreeMap::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed.starts_with("===") {
            header = None;
            continue;
        }
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .trim(csv::Trim::All)
            .from_reader(trimmed.as_bytes());
        let record = reader.records().next().unwrap().unwrap();
        let fields: Vec<String> = record.iter().map(str::to_string).collect();
        let Some(columns) = &header else {
            header = Some(fields);
            continue;
        };
        let kernel = fields[0].clone();
        let ip = u64::from_str_radix(fields[1].trim_start_matches("0x"), 16).unwrap();
        let mut stalls = 0;
        for (name, value) in columns.iter().zip(&fields).skip(2) {
            if name.is_empty() {
                continue;
            }
            let n: u64 = value.parse().unwrap();
            *sums
                .entry(name.clone())
                .or_default()
                .entry(kernel.clone())
                .or_default() += n;
            if name != "Active[Events]" {
                stalls += n;
            }
        }
        *ips.entry(kernel).or_default().entry(ip).or_default() += stalls;
    }
    Expected { sums, ips }
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The column of a `data-type` key.
fn column_of(key: &str) -> &'static str {
    match key {
        "active" => "Active[Events]",
        "sbid" => "SbidStall[Events]",
        "send" => "SendStall[Events]",
        "dist" => "DistStall[Events]",
        "pipe" => "PipeStall[Events]",
        "sync" => "SyncStall[Events]",
        "instrfetch" => "InstrFetchStall[Events]",
        "control" => "ControlStall[Events]",
        "psdep" => "PSDepStall[Events]",
        "other" => "OtherStall[Events]",
        other => panic!("unknown stall type {other}"),
    }
}

/// Per kernel of the totals table: runs, rows, per column the count, and
/// the stall sum.
fn totals_table(html: &str) -> BTreeMap<String, (BTreeMap<String, u64>, u64)> {
    let table = html
        .split("id=\"totals-table\"")
        .nth(1)
        .expect("totals table")
        .split("</table>")
        .next()
        .unwrap();
    let types: Vec<&str> = Regex::new(r#"<th class="num" data-type="([a-z]+)""#)
        .unwrap()
        .captures_iter(table)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    assert!(types.len() >= 9, "{table}");
    let row = Regex::new(r#"<tr data-kernel="([^"]*)">(.*?)</tr>"#).unwrap();
    let value = Regex::new(r#"data-v="(\d+)""#).unwrap();
    let mut out = BTreeMap::new();
    for caps in row.captures_iter(table) {
        let kernel = unescape(&caps[1]);
        let values: Vec<u64> = value
            .captures_iter(&caps[2])
            .map(|c| c[1].parse().unwrap())
            .collect();
        // Runs, IP rows, one per type, the stall sum.
        assert_eq!(values.len(), 2 + types.len() + 1, "{kernel}");
        let per_column = types
            .iter()
            .zip(&values[2..])
            .map(|(t, v)| (column_of(t).to_string(), *v))
            .collect();
        out.insert(kernel, (per_column, values[values.len() - 1]));
    }
    out
}

fn check_totals(input: &Path, html: &str) {
    let want = expected(input);
    let got = totals_table(html);
    let kernels: HashSet<&String> = want.ips.keys().collect();
    assert_eq!(got.keys().collect::<HashSet<_>>(), kernels);
    for (kernel, (per_column, stalls)) in &got {
        for (column, value) in per_column {
            let sum = want.sums.get(column).and_then(|k| k.get(kernel)).copied();
            assert_eq!(Some(*value), sum, "{kernel} {column}");
        }
        let all: u64 = want.ips[kernel].values().sum();
        assert_eq!(*stalls, all, "{kernel}: stall sum without Active");
    }
}

#[test]
fn dashboard_totals_are_the_sums_of_the_csv_columns() {
    for input in [sample("stalls.csv"), two_devices()] {
        let server = Server::analyze(&["-q", input.to_str().unwrap()]);
        let response = get(server.port(), "/");
        assert_eq!(response.status, 200);
        assert_eq!(
            response.header("content-type"),
            Some("text/html; charset=utf-8")
        );
        let html = response.text();
        check_totals(&input, &html);
        // perfdashboard's labels, the panels, and the kernel links.
        assert!(html.contains("SBID (DRAM latency)") && html.contains("Active (No Stall)"));
        assert!(html.contains("Stall Category Totals per Kernel"));
        assert!(html.contains("Top 20 IP Hotspots"));
        assert!(html.contains("/perfdashboard?kernel=triton_poi_fused_add_0"));
        // `/perfdashboard` without a kernel is the same dashboard.
        let same = get(server.port(), "/perfdashboard");
        assert_eq!(same.status, 200);
        check_totals(&input, &same.text());
    }
}

/// The IPs of the kernel page's hot-spot table, with their stall sums.
fn ip_table(html: &str) -> Vec<(String, u64)> {
    let table = html
        .split("<table class=\"sortable ips\">")
        .nth(1)
        .expect("IP table")
        .split("</table>")
        .next()
        .unwrap();
    let row = Regex::new(r#"<tr><td class="ip" data-v="\d+">(?:<a [^>]*>)?<code>([^<]*)</code>.*?class="num" data-v="(\d+)""#)
        .unwrap();
    row.captures_iter(table)
        .map(|c| (c[1].to_string(), c[2].parse().unwrap()))
        .collect()
}

#[test]
fn kernel_page_ranks_top_ips_by_stalls_in_hex() {
    let input = sample("stalls.csv");
    let server = Server::analyze(&["-q", input.to_str().unwrap()]);
    let want = expected(&input);
    for (kernel, top) in [("triton_poi_fused_add_0", 5usize), ("gen_conv", 20)] {
        let target = format!("/perfdashboard?kernel={kernel}&top={top}");
        let response = get(server.port(), &target);
        assert_eq!(response.status, 200, "{target}");
        let html = response.text();
        // Expected: stall sums per IP (Active excluded), most first, ties
        // in address order, IPs without stalls never listed.
        let mut ranked: Vec<(u64, u64)> = want.ips[kernel]
            .iter()
            .filter(|(_, s)| **s > 0)
            .map(|(ip, s)| (*ip, *s))
            .collect();
        ranked.sort_by_key(|(_, s)| std::cmp::Reverse(*s));
        ranked.truncate(top);
        let expected: Vec<(String, u64)> = ranked
            .iter()
            .map(|(ip, s)| (format!("0x{ip:04x}"), *s))
            .collect();
        assert_eq!(ip_table(&html), expected, "{kernel}");
        assert!(html.contains(&format!("<h3>Top {} stalled IPs</h3>", expected.len())));
    }
    // A unique part of a name finds the kernel; a link's name with shape too.
    let html = get(server.port(), "/perfdashboard?kernel=triton").text();
    assert!(html.contains("<h2>triton_poi_fused_add_0</h2>"));
    let shaped = link("triton_poi_fused_add_0[SIMD32 {1024; 1; 1} {128; 1; 1}]", 3);
    let html = get(server.port(), &format!("{shaped}?format=html")).text();
    assert!(html.contains("<h2>triton_poi_fused_add_0</h2>"), "{html}");
    assert!(
        html.contains("href=\"3?format=pdf\""),
        "the page links its PDF"
    );
}

#[test]
fn bad_dashboard_requests_get_clear_answers() {
    let input = sample("stalls.csv");
    let server = Server::analyze(&["-q", input.to_str().unwrap()]);
    let port = server.port();
    for bad in ["0", "x", "501"] {
        let response = get(port, &format!("/perfdashboard?kernel=gen_conv&top={bad}"));
        assert_eq!(response.status, 400, "{bad}");
        assert!(response.text().starts_with(&format!("Invalid top {bad}")));
    }
    let response = get(port, "/perfdashboard?kernel=gen_cnv");
    assert_eq!(response.status, 404);
    // Error bodies are HTML-escaped (docs/robustness.md#servers).
    assert!(
        response.text().starts_with(
            "No EU stall samples found for kernel gen_cnv; closest names: &quot;gen_conv&quot;"
        ),
        "{}",
        response.text()
    );
    // `main` is part of two kernel names: ambiguous, both listed.
    let response = get(port, "/perfdashboard?kernel=main");
    assert_eq!(response.status, 404);
    assert!(response.text().contains("main::{lambda(auto:1)#4}"));
    drop(server);
    // A missing -s folder is the server's own misconfiguration (500, the
    // original's text), as for the PDF links.
    let server = Server::analyze(&["-q", "-s", "/nonexistent/dump", input.to_str().unwrap()]);
    let response = get(server.port(), "/perfdashboard?kernel=gen_conv");
    assert_eq!(response.status, 500);
    assert_eq!(
        response.text(),
        "Shader dump folder /nonexistent/dump does not exist"
    );
}

#[test]
fn ip_links_and_assembly_only_with_a_dump() {
    let input = sample("stalls.csv");
    let dump = sample("dump");
    let target = "/perfdashboard?kernel=triton_poi_fused_add_0";

    let without = Server::analyze(&["-q", input.to_str().unwrap()]);
    let html = get(without.port(), target).text();
    assert!(!html.contains("href=\"#ip-"), "no links without a dump");
    assert!(!html.contains("class=\"spot\""));
    assert!(html.contains("No shader dump was given"));
    assert!(html.contains("IGC_ShaderDumpEnable=1"));
    let index = get(without.port(), "/").text();
    assert!(!index.contains("#ip-"));
    drop(without);

    let with = Server::analyze(&["-q", "-s", dump.to_str().unwrap(), input.to_str().unwrap()]);
    let html = get(with.port(), target).text();
    assert!(!html.contains("No shader dump was given"));
    // The hottest IP links to its place in the assembly, which shows the
    // instruction (address as the annotated listing writes it) marked, and
    // the source line IGC annotated.
    let top = &ip_table(&html)[0].0;
    assert_eq!(top, "0x0210");
    assert!(html.contains("href=\"#ip-0x0210\""));
    assert!(html.contains("<div class=\"spot\" id=\"ip-0x0210\">"));
    let spot = html.split("id=\"ip-0x0210\"").nth(1).unwrap();
    let spot = spot.split("</div>").next().unwrap();
    assert!(
        spot.contains("<span class=\"stalled\">/* [00000210] */"),
        "{spot}"
    );
    assert!(spot.contains("Source: <code>tmp2 = tmp0 + tmp1</code>"));
    assert!(spot.contains("<span class=\"marker\">// Line 27:"));
    // The stall report as text and the per-line table.
    assert!(html.contains("Report of Top 10 Stalls of Each Type"));
    assert!(html.contains("Stall events per source line"));
    // Every in-page link has its target.
    check_anchors(&html);
    // A kernel the dump has no .asm for says so, and links nothing.
    let html = get(with.port(), "/perfdashboard?kernel=gen_conv").text();
    assert!(html.contains("has no .asm file for this kernel"));
    assert!(!html.contains("href=\"#ip-"));
    // The dashboard's hot spots link into the kernel pages.
    let index = get(with.port(), "/").text();
    assert!(index.contains("/perfdashboard?kernel=triton_poi_fused_add_0#ip-0x0210"));
}

/// Every `href="#x"` of `html` names an `id="x"` of it.
fn check_anchors(html: &str) {
    let ids: HashSet<String> = Regex::new(r#" id="([^"]+)""#)
        .unwrap()
        .captures_iter(html)
        .map(|c| c[1].to_string())
        .collect();
    let mut links = 0;
    for c in Regex::new(r##"href="#([^"]+)""##)
        .unwrap()
        .captures_iter(html)
    {
        links += 1;
        assert!(ids.contains(&c[1]), "link to missing #{}", &c[1]);
    }
    assert!(links > 0);
}

#[test]
fn pdf_answer_of_a_stall_link_is_the_original_charts() {
    // The PDF of `/<kernel>/<id>` is exactly what `analyze -k K -s DUMP -o
    // x.pdf` writes: charts of the kernel's first run, then its report.
    let input = sample("stalls.csv");
    let dump = sample("dump");
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("k.pdf");
    let status = Command::new(env!("CARGO_BIN_EXE_analyze"))
        .args(["-k", "triton_poi_fused_add_0", "-s"])
        .arg(&dump)
        .arg("-o")
        .arg(&pdf)
        .arg(&input)
        .output()
        .unwrap();
    assert!(status.status.success());
    let server = Server::analyze(&["-q", "-s", dump.to_str().unwrap(), input.to_str().unwrap()]);
    let response = get(server.port(), &link("triton_poi_fused_add_0", 1));
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some("application/pdf"));
    assert!(
        response.body == std::fs::read(&pdf).unwrap(),
        "server PDF differs from -o"
    );
}

#[test]
fn html_output_of_a_stall_file_has_the_report_as_text_linked_from_the_bars() {
    let input = sample("stalls.csv");
    let dump = sample("dump");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stalls.html");
    let report = dir.path().join("report.txt");
    let run = Command::new(env!("CARGO_BIN_EXE_analyze"))
        .arg("-s")
        .arg(&dump)
        .arg("-r")
        .arg(&report)
        .arg("-o")
        .arg(&out)
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    // The original's console messages are kept.
    assert!(stdout.contains("Analyzed kernel triton_poi_fused_add_0"));
    assert!(stdout.contains("Not found .asm file for gen_conv"));
    let html = std::fs::read_to_string(&out).unwrap();
    // Text, not SVG pages of text.
    assert!(!html.contains("<svg") && !html.contains("<figure"));
    // Offline: no resource fetched from anywhere.
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    check_totals(&input, &html);
    // Every kernel has a section; the bars of its hot spots jump to the
    // IP's place in the report.
    let want = expected(&input);
    assert_eq!(
        html.matches("<section class=\"card kernel\"").count(),
        want.ips.len()
    );
    assert!(
        html.contains("href=\"#k4-ip-0x0210\""),
        "triton is the fourth kernel"
    );
    assert!(html.contains("<div class=\"spot\" id=\"k4-ip-0x0210\">"));
    check_anchors(&html);
    // The report of each kernel with an .asm is there as text, the same
    // text as `-r` for a kernel with one run.
    let text = std::fs::read_to_string(&report).unwrap();
    let triton = text
        .split("Kernel: ")
        .find(|r| r.starts_with("triton_poi_fused_add_0\n"))
        .unwrap();
    let escaped = triton
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;");
    let escaped = escaped.trim_end_matches('\n');
    assert!(html.contains(escaped), "report text of triton in the page");
    assert!(html.contains("The shader dump"), "gen_conv has no .asm");

    // `-k K`: the first run of K only, one section, no global panel.
    let one = dir.path().join("one.html");
    let run = Command::new(env!("CARGO_BIN_EXE_analyze"))
        .args(["-k", "triton_poi_fused_add_0", "-s"])
        .arg(&dump)
        .arg("-o")
        .arg(&one)
        .arg(&input)
        .output()
        .unwrap();
    assert!(run.status.success());
    let html = std::fs::read_to_string(&one).unwrap();
    assert_eq!(html.matches("<section class=\"card kernel\"").count(), 1);
    assert!(!html.contains("IP Hotspots"));
    assert!(html.contains("<div class=\"spot\" id=\"k1-ip-0x0210\">"));
    check_anchors(&html);

    // Without a dump: the dashboard and the hot spots, no links into
    // assembly, a note saying how to get them.
    let plain = dir.path().join("plain.html");
    let run = Command::new(env!("CARGO_BIN_EXE_analyze"))
        .arg("-o")
        .arg(&plain)
        .arg(&input)
        .output()
        .unwrap();
    assert!(run.status.success());
    let html = std::fs::read_to_string(&plain).unwrap();
    check_totals(&input, &html);
    assert!(!html.contains("-ip-0x"));
    assert!(html.contains("No shader dump was given"));
    check_anchors(&html);
}

#[test]
fn uniview_serves_the_stall_dashboard_next_to_the_trace() {
    let data = |name: &str| testdata(name);
    let (trace, stalls, dump) = (data("trace.json"), data("stalls.csv"), data("dump"));
    let args = [
        "--trace-port",
        "0",
        "--port",
        "0",
        "--no-browser",
        "-t",
        trace.to_str().unwrap(),
        "-m",
        stalls.to_str().unwrap(),
        "-s",
        dump.to_str().unwrap(),
    ];
    let server = Server::start(env!("CARGO_BIN_EXE_uniview"), &args, |s| {
        s.perfetto_url.is_some() && s.port.is_some()
    });
    let port = server.port();
    let index = get(port, "/");
    assert_eq!(index.status, 200);
    check_totals(&stalls, &index.text());
    let html = get(port, "/perfdashboard?kernel=main::%7Blambda(auto:1)%234%7D").text();
    assert!(html.contains("<h2>main::{lambda(auto:1)#4}</h2>"), "{html}");
    assert!(
        html.contains("class=\"spot\""),
        "the dump links IPs to assembly"
    );
    check_anchors(&html);
}
