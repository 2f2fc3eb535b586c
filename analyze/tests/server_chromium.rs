//! A real browser opens an instance page: headless Chromium (Debian
//! `chromium`, installed by scripts/test.sh) loads `?format=html` from the
//! running server and the DOM it builds must hold the charts; the stall
//! dashboard's inline script must have run (filter, sort, tooltip element).

use std::process::Command;

use crate::server_common::*;

const MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";

/// The DOM Chromium builds for `url` (`--dump-dom`).
pub fn chromium_dom(url: &str) -> String {
    unitrace_system_tests::chromium_dom(url, &[])
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
    // The kernel's stall dashboard page (docs/analyze.md#stall-dashboard),
    // its script run.
    assert!(dom.contains("data-ready=\"1\""), "{dom}");
    assert!(dom.contains("SBID (DRAM latency)"));
    assert!(dom.contains("class=\"seg\""), "bars drawn");
}

/// The stall dashboard's script ran (docs/analyze.md#stall-dashboard): the
/// filter taken from `?q=` hid the other kernels' bars and rows and counted
/// them, the totals table is sorted by its default column, the tooltip
/// element is in place; the kernel page's hot spots link into the
/// assembly.
#[test]
fn chromium_runs_the_stall_dashboard_script() {
    let input = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/sample");
    let csv = input.join("stalls.csv");
    let dump = input.join("dump");
    let server = Server::analyze(&["-q", "-s", dump.to_str().unwrap(), csv.to_str().unwrap()]);
    let port = server.port();
    let dom = chromium_dom(&format!("http://127.0.0.1:{port}/?q=TRITON"));
    assert!(
        dom.contains("data-ready=\"1\""),
        "the script did not finish: {dom}"
    );
    assert!(
        dom.contains("<span id=\"kernel-count\">1 of 6 kernels</span>"),
        "{dom}"
    );
    // Six kernels in the chart and the table; five of each hidden.
    assert_eq!(dom.matches("<tr data-kernel=").count(), 6);
    let table = dom.split("id=\"totals-table\"").nth(1).unwrap();
    let table = table.split("</table>").next().unwrap();
    assert_eq!(table.matches("hidden=\"\"").count(), 5, "{table}");
    let visible: Vec<&str> = table
        .split("<tr data-kernel=\"")
        .skip(1)
        .filter(|row| !row.contains("hidden=\"\""))
        .collect();
    assert_eq!(visible.len(), 1);
    assert!(visible[0].starts_with("triton_poi_fused_add_0\""));
    assert!(
        table.contains("aria-sort=\"descending\">Stalls (no Active)</th>"),
        "{table}"
    );
    // The rows are in the order the script sorted them: most stalls first.
    let totals: Vec<u64> = table
        .split("<tr data-kernel=\"")
        .skip(1)
        .map(|row| {
            let last = row.rsplit("data-v=\"").next().unwrap();
            last.split('"').next().unwrap().parse().unwrap()
        })
        .collect();
    let mut sorted = totals.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(totals, sorted);
    assert!(dom.contains("<div id=\"ud-tip\" hidden=\"\"></div>"));

    // `?hide=active`: the legend entry is off, Active segments are hidden
    // and the widest row of the totals fills its track again.
    let dom = chromium_dom(&format!("http://127.0.0.1:{port}/?hide=active"));
    assert!(
        dom.contains("data-type=\"active\" aria-pressed=\"false\""),
        "{dom}"
    );
    let chart = dom.split("id=\"totals-chart\"").nth(1).unwrap();
    let chart = chart.split("</section>").next().unwrap();
    let active: Vec<&str> = chart
        .split("<span class=\"seg\" data-type=\"active\"")
        .skip(1)
        .collect();
    assert_eq!(active.len(), 6);
    assert!(active
        .iter()
        .all(|seg| seg.split('>').next().unwrap().contains("display: none")));
    let widest = chart
        .split("<div class=\"hrow\"")
        .skip(1)
        .map(|row| {
            row.split("<span class=\"seg\" data-type=\"")
                .skip(1)
                .filter(|seg| !seg.starts_with("active"))
                .map(|seg| {
                    let w = seg.split("width: ").nth(1).unwrap();
                    w.split('%').next().unwrap().parse::<f64>().unwrap()
                })
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    assert!((widest - 100.0).abs() < 0.01, "widest row {widest}%");

    let dom = chromium_dom(&format!(
        "http://127.0.0.1:{port}/perfdashboard?kernel=triton_poi_fused_add_0&top=5"
    ));
    assert!(dom.contains("data-ready=\"1\""));
    assert!(dom.contains("<h3>Top 5 stalled IPs</h3>"));
    assert!(dom.contains("href=\"#ip-0x0210\""));
    assert!(dom.contains("id=\"ip-0x0210\""));
}

/// `analyze -s DUMP -o x.html` on a stall file: clicking a hot-spot bar
/// (not its label) jumps to the IP's place in the report. The test appends
/// a script to its copy of the page that clicks the first bar segment and
/// records where the page went.
#[test]
fn chromium_follows_a_click_on_a_stall_bar_to_the_report() {
    let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/sample");
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("stalls.html");
    let run = Command::new(env!("CARGO_BIN_EXE_analyze"))
        .args(["-k", "triton_poi_fused_add_0", "-s"])
        .arg(sample.join("dump"))
        .arg("-o")
        .arg(&page)
        .arg(sample.join("stalls.csv"))
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    let probe = "<script>\
        var seg = document.querySelector('.hbars.ips .seg');\
        seg.dispatchEvent(new MouseEvent('click', { bubbles: true }));\
        document.body.setAttribute('data-hash', location.hash);\
        </script>\n</body>";
    std::fs::write(&page, html.replace("</body>", probe)).unwrap();
    let dom = chromium_dom(&format!("file://{}", page.display()));
    assert!(dom.contains("data-hash=\"#k1-ip-0x0210\""), "{dom}");
}
