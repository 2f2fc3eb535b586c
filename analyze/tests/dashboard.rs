//! The metric dashboard (docs/analyze.md#dashboard): the server's index
//! and instance pages, perfdashboard's URL and messages, and `analyze -o
//! x.html`. The numbers on the pages are checked against the CSV read
//! here independently; headless Chromium checks what the script draws.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::server_chromium::chromium_dom;
use crate::server_common::*;
use crate::server_index::inline_json;

const MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";
const CONV: &str = "gen_conv[SIMD16 {28; 28; 8} {16; 1; 1}]";

/// One data row of a metric CSV: section, kernel, values by column name.
struct CsvRow {
    section: usize,
    kernel: String,
    values: BTreeMap<String, f64>,
}

/// Every data row of a metric CSV, read without the project's parser.
fn read_csv(path: &Path) -> Vec<CsvRow> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows = Vec::new();
    let mut header: Vec<String> = Vec::new();
    let mut section = 0;
    for line in text.lines() {
        if line.starts_with("===") {
            section += 1;
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .trim(csv::Trim::All)
            .from_reader(line.as_bytes());
        let record = reader.records().next().unwrap().unwrap();
        let fields: Vec<String> = record.iter().map(str::to_string).collect();
        if fields[0] == "Kernel" {
            header = fields;
            continue;
        }
        let values = header
            .iter()
            .zip(&fields)
            .skip(1)
            .filter_map(|(name, value)| Some((name.clone(), value.parse::<f64>().ok()?)))
            .collect();
        rows.push(CsvRow {
            section,
            kernel: fields[0].clone(),
            values,
        });
    }
    rows
}

/// Rows of instance `gid` in the first section that has it.
fn rows_of(rows: &[CsvRow], gid: u64) -> Vec<&CsvRow> {
    let of = |r: &&CsvRow| r.values.get("GlobalInstanceId") == Some(&(gid as f64));
    let Some(section) = rows.iter().find(of).map(|r| r.section) else {
        return Vec::new();
    };
    rows.iter()
        .filter(of)
        .filter(|r| r.section == section)
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap_or(f64::NAN))
        .collect()
}

/// The inline JSON of every instance section of a page, in order.
fn instance_data(html: &str) -> Vec<Value> {
    html.split("<script type=\"application/json\" class=\"inst-data\">")
        .skip(1)
        .map(|rest| serde_json::from_str(&rest[..rest.find("</script>").unwrap()]).unwrap())
        .collect()
}

#[test]
fn instance_page_has_the_csv_values_and_counters_grouped_by_unit() {
    let input = testdata("metrics3.csv");
    let server = Server::analyze(&["-q", input.to_str().unwrap()]);
    let port = server.port();
    let csv = read_csv(&input);
    for gid in [7u64, 20, 38] {
        let page = get(port, &format!("/perfdashboard?gid={gid}&kernel=anything"));
        assert_eq!(page.status, 200);
        let html = page.text();
        let data = instance_data(&html);
        assert_eq!(data.len(), 1);
        let data = &data[0];
        let rows = rows_of(&csv, gid);
        assert!(!rows.is_empty());
        assert_eq!(data["gid"], gid);
        assert_eq!(data["kernel"], rows[0].kernel.as_str());
        assert_eq!(data["samples"], rows.len());
        let counters = data["counters"].as_object().unwrap();
        assert!(counters.len() > 20, "{counters:?}");
        for (name, values) in counters {
            let expected: Vec<f64> = rows.iter().map(|r| r.values[name]).collect();
            let got = numbers(values);
            assert!(
                got.iter().zip(&expected).all(|(a, b)| close(*a, *b))
                    && got.len() == expected.len(),
                "{gid} {name}: {got:?} vs {expected:?}"
            );
        }
        // X: time since the instance's first sample, in µs.
        let t0 = rows[0].values["QueryBeginTime[ns]"];
        let x: Vec<f64> = rows
            .iter()
            .map(|r| (r.values["QueryBeginTime[ns]"] - t0) / 1000.0)
            .collect();
        assert!(numbers(&data["x"]["values"])
            .iter()
            .zip(&x)
            .all(|(a, b)| close(*a, *b)));
        // The same JSON answers "compare with".
        let json = get(port, &format!("/perfdashboard?gid={gid}&format=json"));
        assert_eq!(json.header("content-type"), Some("application/json"));
        assert_eq!(&serde_json::from_str::<Value>(&json.text()).unwrap(), data);
        // Counters by unit, sorted; columns without a unit and perfdashboard's
        // exclusions never offered.
        let config = inline_json(&html, "dash-config");
        let mut seen = Vec::new();
        for group in config["units"].as_array().unwrap() {
            let unit = group["unit"].as_str().unwrap();
            seen.push(unit.to_lowercase());
            for name in group["counters"].as_array().unwrap() {
                assert!(
                    name.as_str().unwrap().ends_with(&format!("[{unit}]")),
                    "{name}"
                );
            }
        }
        let mut sorted = seen.clone();
        sorted.sort();
        assert_eq!(seen, sorted);
        for unit in ["%", "bytes", "events", "ns"] {
            assert!(seen.contains(&unit.to_string()), "{seen:?}");
        }
        let order: Vec<&str> = config["order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for absent in [
            "QueryBeginTime[ns]",
            "ReportReason",
            "ContextId",
            "GlobalInstanceId",
            "Kernel",
        ] {
            assert!(!order.contains(&absent), "{absent}");
        }
        assert_eq!(
            config["selected"],
            serde_json::json!([
                "XVE_ACTIVE[%]",
                "XVE_STALL[%]",
                "XVE_THREADS_OCCUPANCY_ALL[%]",
                "GPU_MEMORY_BYTE_READ[bytes]",
                "GPU_MEMORY_BYTE_WRITE[bytes]"
            ])
        );
        // Names the kernel and the instance, links back and to the PDF.
        assert!(html.contains(&format!("GlobalInstanceId {gid}")));
        assert!(html.contains("<a href=\"/\">All kernels</a>"));
        let pdf = format!("/%22{}%22/{gid}", encode(&rows[0].kernel));
        assert!(html.contains(&format!("href=\"{pdf}\"")), "{html}");
    }
}

#[test]
fn index_has_the_mean_and_max_of_instance_means() {
    let input = testdata("metrics3.csv");
    let server = Server::analyze(&["-q", input.to_str().unwrap()]);
    let html = get(server.port(), "/").text();
    let data = inline_json(&html, "index-data");
    let csv = read_csv(&input);
    for kernel in data["kernels"].as_array().unwrap() {
        let name = kernel["name"].as_str().unwrap();
        for counter in [
            "XVE_ACTIVE[%]",
            "GpuTime[ns]",
            "GPU_MEMORY_BYTE_READ[bytes]",
        ] {
            // Instances: runs of one (section, id).
            let mut means: BTreeMap<(usize, u64), (f64, f64)> = BTreeMap::new();
            for row in csv.iter().filter(|r| r.kernel == name) {
                let id = row.values["GlobalInstanceId"] as u64;
                let e = means.entry((row.section, id)).or_default();
                e.0 += row.values[counter];
                e.1 += 1.0;
            }
            let means: Vec<f64> = means.values().map(|(s, n)| s / n).collect();
            assert_eq!(means.len(), 6);
            let mean = means.iter().sum::<f64>() / means.len() as f64;
            let max = means.iter().cloned().fold(f64::MIN, f64::max);
            let got = numbers(&kernel["stats"][counter]);
            assert!(
                close(got[0], mean) && close(got[1], max),
                "{name} {counter}: {got:?} vs {mean} {max}"
            );
        }
    }
    assert_eq!(data["order"].as_array().unwrap().len(), 29);
}

#[test]
fn perfdashboard_urls_answer_like_perfdashboard() {
    let input = testdata("metrics3.csv");
    let options = testdata("options.txt");
    let server = Server::analyze(&[
        "-q",
        "-f",
        options.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    let port = server.port();
    // No gid: the index.
    let index = get(port, "/perfdashboard");
    assert_eq!(index.status, 200);
    assert!(index.text().contains("id=\"index-data\""));
    for bad in ["abc", "-1", "", "1x"] {
        let r = get(port, &format!("/perfdashboard?gid={bad}"));
        assert_eq!(r.status, 400, "{bad}");
        assert_eq!(r.text(), "Missing or invalid kernel instance id");
    }
    let r = get(port, "/perfdashboard?gid=12345");
    assert_eq!(r.status, 404);
    assert_eq!(
        r.text(),
        "No instance with GlobalInstanceId 12345 in the file"
    );
    let r = get(port, "/perfdashboard?gid=12345&format=json");
    assert_eq!(r.text(), "Kernel ID 12345 not found.");
    // The original's URL stays the PDF; ?format=html is our page.
    let pdf = get(port, &link(MAIN, 26));
    assert_eq!(pdf.header("content-type"), Some("application/pdf"));
    assert!(pdf.body.starts_with(b"%PDF"));
    let html = get(port, &format!("{}?format=html", link(CONV, 20))).text();
    assert!(html.contains("data-gid=\"20\""));
    assert!(html.contains("<a href=\"20?format=pdf\">PDF</a>"), "{html}");
}

#[test]
fn query_reports_are_bars_with_doubtful_ones_marked_or_left_out() {
    let input = testdata("query.csv");
    let csv = read_csv(&input);
    let doubtful: Vec<u64> = csv
        .iter()
        .filter(|r| {
            r.values.iter().any(|(k, v)| {
                (k.starts_with("MidQuery")
                    || k == "CoreFrequencyChanged"
                    || k == "ReportCtxSwitchLost"
                    || k == "QuerySplitOccurred")
                    && *v != 0.0
            })
        })
        .map(|r| r.values["GlobalInstanceId"] as u64)
        .collect();
    assert!(!doubtful.is_empty());
    let server = Server::analyze(&["-q", input.to_str().unwrap()]);
    for row in &csv {
        let gid = row.values["GlobalInstanceId"] as u64;
        let data: Value = serde_json::from_str(
            &get(
                server.port(),
                &format!("/perfdashboard?gid={gid}&format=json"),
            )
            .text(),
        )
        .unwrap();
        assert_eq!(data["query"], true);
        assert_eq!(data["x"]["label"], "Query report");
        assert_eq!(numbers(&data["x"]["values"]), vec![row.values["ReportId"]]);
        let marked = !data["doubtful"].as_array().unwrap().is_empty();
        assert_eq!(marked, doubtful.contains(&gid), "{gid}");
    }
    let strict = Server::analyze(&["-q", "--strict", input.to_str().unwrap()]);
    let page = get(
        strict.port(),
        &format!("/perfdashboard?gid={}", doubtful[0]),
    )
    .text();
    assert_eq!(instance_data(&page)[0]["samples"], 0);
    assert!(page.contains("1 flagged report left out"), "{page}");
}

fn analyze(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_analyze"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn static_page_has_contents_headings_and_the_csv_values() {
    let input = testdata("metrics3.csv");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.html");
    let run = analyze(&[
        "-k",
        MAIN,
        "-i",
        "0",
        "-m",
        "XVE_ACTIVE[%]",
        "-y",
        "p",
        "-o",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let html = std::fs::read_to_string(&out).unwrap();
    let data = instance_data(&html);
    let csv = read_csv(&input);
    let first: Vec<&CsvRow> = csv
        .iter()
        .filter(|r| r.section == 1 && r.kernel == MAIN)
        .collect();
    let ids: Vec<u64> = {
        let mut ids: Vec<u64> = first
            .iter()
            .map(|r| r.values["GlobalInstanceId"] as u64)
            .collect();
        ids.dedup();
        ids
    };
    assert_eq!(data.len(), ids.len());
    for (i, (d, id)) in data.iter().zip(&ids).enumerate() {
        assert_eq!(d["gid"], *id);
        assert_eq!(d["ordinal"], i + 1);
        let expected: Vec<f64> = rows_of(&csv, *id)
            .iter()
            .map(|r| r.values["XVE_ACTIVE[%]"])
            .collect();
        assert_eq!(numbers(&d["counters"]["XVE_ACTIVE[%]"]), expected);
        assert!(html.contains(&format!(
            "<a href=\"#inst-{}\">instance {}, GlobalInstanceId {id}</a>",
            i + 1,
            i + 1
        )));
        assert!(html.contains(&format!("id=\"inst-{}\" data-gid=\"{id}\"", i + 1)));
    }
    assert!(html.contains(
        "<h2 class=\"kernel\">main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]</h2>"
    ));
    // -m picks the first selection; every counter is offered.
    let config = inline_json(&html, "dash-config");
    assert_eq!(config["selected"], serde_json::json!(["XVE_ACTIVE[%]"]));
    assert_eq!(config["source"], "inline");
    assert_eq!(config["order"].as_array().unwrap().len(), 29);
    assert!(!html.contains("src=\"http") && !html.contains("fetch('http"));
}

#[test]
fn a_static_page_of_many_instances_says_so_and_draws_lazily() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("many.csv");
    let mut text = String::from("Kernel,GlobalInstanceId,GpuTime[ns],XVE_ACTIVE[%]\n");
    for i in 0..205 {
        text.push_str(&format!("\"k\",{i},{},{}.5\n\n", 100 + i, i % 100));
    }
    std::fs::write(&input, text).unwrap();
    let out = dir.path().join("many.html");
    let run = analyze(&[
        "-i",
        "0",
        "-m",
        "XVE_ACTIVE[%]",
        "-y",
        "p",
        "-o",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    assert!(run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("more than 200 instances on one page"),
        "{stderr}"
    );
    let html = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        html.matches("<section class=\"card instance\"").count(),
        205
    );
    assert_eq!(
        instance_data(&html)[204]["counters"]["XVE_ACTIVE[%]"],
        serde_json::json!([4.5])
    );
}

#[test]
fn chromium_draws_the_index_table_and_the_static_page() {
    let input = testdata("metrics3.csv");
    let server = Server::analyze(&["-q", input.to_str().unwrap()]);
    let dom = chromium_dom(&format!("http://127.0.0.1:{}/?q=conv", server.port()));
    // One row per kernel, the filter from ?q= hiding the other.
    assert_eq!(dom.matches("<tr data-kernel=").count(), 2, "{dom}");
    assert!(dom.contains("1 of 2 kernels shown"), "{dom}");
    // 2 columns per default counter + kernel + instances.
    let head = dom
        .split("<thead>")
        .nth(1)
        .unwrap()
        .split("</thead>")
        .next()
        .unwrap();
    assert_eq!(head.matches("<th").count(), 2 + 2 * 5, "{head}");
    // Instance page with "compare with" from the URL: both drawn.
    let dom = chromium_dom(&format!(
        "http://127.0.0.1:{}/perfdashboard?gid=20&compare=26",
        server.port()
    ));
    assert!(dom.contains("Kernel 26: main::"), "{dom}");
    assert_eq!(dom.matches("<polyline").count(), 10, "{dom}");
    // The static page: the first instances drawn when in view.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.html");
    let run = analyze(&[
        "-i",
        "0",
        "-m",
        "XVE_ACTIVE[%],XVE_STALL[%]",
        "-y",
        "p",
        "-o",
        out.to_str().unwrap(),
        input.to_str().unwrap(),
    ]);
    assert!(run.status.success());
    let dom = chromium_dom(&format!("file://{}", out.display()));
    assert!(dom.matches("<polyline").count() >= 2, "{dom}");
    assert!(dom.contains("data-series=\"XVE_STALL[%]\""));
}
