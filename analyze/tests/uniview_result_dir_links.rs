//! The dashboards reached from the `uniview --result-dir` index keep the
//! rank and device of their file in every link, form and script request,
//! and link back to the index (docs/uniview.md#result-dir-links).
//!
//! The tree has two ranks, each with a metric file (`metrics_0.csv`, from
//! testdata/uniview-resdir/metrics) and a stall file (`metrics_1.csv`,
//! from testdata/uniview-resdir/stalls, with its shader dump): the ranks'
//! instance ids and kernel names are the same, their numbers are not, so
//! a link that loses the rank shows rank 0's data.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use crate::server_chromium::chromium_dom;
use crate::server_common::*;

const UNIVIEW: &str = env!("CARGO_BIN_EXE_uniview");
const RANKS: [&str; 2] = ["rank_0.app.100", "rank_1.app.101"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/uniview-resdir")
}

fn dump() -> PathBuf {
    fixtures().join("stalls/dump")
}

/// The tree in `d`: per rank its metric file as device 0, its stall file
/// as device 1, and the server testdata's trace (uniview wants one).
fn build_tree(d: &Path) {
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
            fixtures()
                .join("stalls")
                .join(rank)
                .join("metrics/metrics_1.csv"),
            metrics.join("metrics_1.csv"),
        )
        .unwrap();
        std::fs::copy(
            testdata("trace.json"),
            d.join(rank).join("chrome_trace.json"),
        )
        .unwrap();
    }
}

fn file(d: &Path, rank: usize, device: u32) -> String {
    d.join(RANKS[rank])
        .join(format!("metrics/metrics_{device}.csv"))
        .display()
        .to_string()
}

fn start(d: &Path) -> Server {
    let options = testdata("options.txt");
    let dump = dump();
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
        "-s",
        dump.to_str().unwrap(),
    ];
    Server::start(UNIVIEW, &args, |s| {
        s.perfetto_url.is_some() && s.port.is_some()
    })
}

fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Every `href` of a page, unescaped (forms are checked apart).
fn links_of(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .map(|part| unescape(part.split('"').next().unwrap()))
        .collect()
}

/// The hidden fields of the page's form, as a query.
fn hidden_fields(html: &str) -> String {
    html.split("<input type=\"hidden\" ")
        .skip(1)
        .map(|part| {
            let name = part
                .split("name=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let value = part
                .split("value=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            format!("{name}={}", encode(&unescape(value)))
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// `link` as the browser resolves it on the page at `base`.
fn resolve(base: &str, link: &str) -> String {
    if link.starts_with('/') {
        return link.to_string();
    }
    let path = base.split(['?', '#']).next().unwrap();
    let dir = &path[..path.rfind('/').unwrap() + 1];
    format!("{dir}{link}")
}

/// The value of query key `key` in `url`.
fn query_value(url: &str, key: &str) -> Option<String> {
    let query = url.split('#').next()?.split_once('?')?.1;
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.to_string())
}

/// The header's links, in order: `(text, href)`.
fn header_links(html: &str) -> Vec<(String, String)> {
    let nav = html
        .split("<nav>")
        .nth(1)
        .and_then(|n| n.split("</nav>").next())
        .unwrap_or("");
    nav.split("<a href=\"")
        .skip(1)
        .map(|a| {
            let (href, rest) = a.split_once("\">").unwrap();
            let text = rest.split("</a>").next().unwrap();
            (unescape(text), unescape(href))
        })
        .collect()
}

/// What the crawl of one file's pages found.
#[derive(Default)]
struct Crawl {
    pages: usize,
    pdfs: usize,
    /// Links into the assembly view of another page (`…#ip-0x…`).
    spot_links: usize,
    back_links: usize,
    /// HTML pages by URL (without fragment).
    html: BTreeMap<String, String>,
}

/// Follows every link reachable from `start` (the index `/` excepted,
/// which is checked as the back link): each answers 200; each page shows
/// `own` (the file of rank 1 it belongs to) and no other file of the tree,
/// has the header link back to the index, and every link leaving it
/// carries `rank=1&device=D`; anchors name an element of their page; PDF
/// links answer a PDF. `dom_of` gives a page's links after its script ran
/// (the metric index builds its instance links by script).
fn crawl(
    port: u16,
    start: &str,
    device: u32,
    own: &str,
    others: &[String],
    index: &str,
    dom_of: &dyn Fn(&str) -> Option<String>,
) -> Crawl {
    let mut found = Crawl::default();
    let mut queue = VecDeque::from([start.to_string()]);
    let mut seen = BTreeSet::new();
    // Anchors into other pages, checked once those are fetched.
    let mut anchors: Vec<(String, String)> = Vec::new();
    while let Some(url) = queue.pop_front() {
        if !seen.insert(url.clone()) {
            continue;
        }
        let answer = get(port, &url);
        assert_eq!(answer.status, 200, "{url}: {}", answer.text());
        if answer.header("content-type") == Some("application/pdf") {
            assert!(answer.body.starts_with(b"%PDF-"), "{url}");
            found.pdfs += 1;
            continue;
        }
        assert_eq!(
            answer.header("content-type"),
            Some("text/html; charset=utf-8"),
            "{url}"
        );
        found.pages += 1;
        let page = answer.text();
        assert!(page.contains(own), "{url} does not show {own}");
        for other in others {
            assert!(!page.contains(other.as_str()), "{url} shows {other}");
        }
        // The back link, first in the header.
        let header = header_links(&page);
        assert_eq!(
            header.first(),
            Some(&("Result-dir index".to_string(), "/".to_string())),
            "{url}: {header:?}"
        );
        let mut links = links_of(&page);
        if let Some(dom) = dom_of(&url) {
            links.extend(links_of(&dom));
        }
        for link in links {
            if link == "/" {
                found.back_links += 1;
                continue;
            }
            if let Some(id) = link.strip_prefix('#') {
                assert!(page.contains(&format!("id=\"{id}\"")), "{url}: {link}");
                continue;
            }
            let target = resolve(&url, &link);
            assert_eq!(
                query_value(&target, "rank").as_deref(),
                Some("1"),
                "{url}: {link}"
            );
            assert_eq!(
                query_value(&target, "device"),
                Some(device.to_string()),
                "{url}: {link}"
            );
            let (target, fragment) = match target.split_once('#') {
                Some((t, f)) => (t.to_string(), Some(f.to_string())),
                None => (target, None),
            };
            if let Some(fragment) = fragment {
                if fragment.starts_with("ip-") {
                    found.spot_links += 1;
                }
                anchors.push((target.clone(), fragment));
            }
            queue.push_back(target);
        }
        // The form (the stall pages' kernel chooser) sends the same keys.
        let actions: Vec<&str> = page.split(" action=\"").skip(1).collect();
        assert!(actions.len() <= 1, "{url}");
        if let Some(action) = actions.first() {
            assert!(action.starts_with("/perfdashboard\""), "{url}: {action}");
            let fields = hidden_fields(&page);
            assert_eq!(fields, format!("rank=1&device={device}"), "{url}");
            let kernel = page
                .split("<option value=\"")
                .nth(1)
                .and_then(|o| o.split('"').next())
                .map(unescape)
                .unwrap();
            queue.push_back(format!(
                "/perfdashboard?{fields}&kernel={}&top=5",
                encode(&kernel)
            ));
        }
        found.html.insert(url, page);
    }
    for (target, id) in anchors {
        let page = &found.html[&target];
        assert!(page.contains(&format!("id=\"{id}\"")), "{target}#{id}");
    }
    // The back link leads to the index.
    let back = get(port, "/");
    assert_eq!(back.status, 200);
    assert_eq!(back.text(), index);
    found
}

/// A stall file's rows per kernel, read here independently of the server.
fn stall_rows(path: &str) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut rows = BTreeMap::new();
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let name = line.split('"').nth(1).unwrap();
        *rows.entry(name.to_string()).or_insert(0) += 1;
    }
    rows
}

/// `GpuTime[ns]` of every instance of a query-mode metric file.
fn gpu_times(path: &str) -> BTreeMap<u64, f64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let id_at = header
        .iter()
        .position(|h| *h == "GlobalInstanceId")
        .unwrap()
        - 1;
    let time_at = header.iter().position(|h| *h == "GpuTime[ns]").unwrap() - 1;
    lines
        .map(|line| {
            let fields: Vec<&str> = line.rsplit_once("\",").unwrap().1.split(',').collect();
            (
                fields[id_at].parse().unwrap(),
                fields[time_at].parse().unwrap(),
            )
        })
        .collect()
}

/// From the index to rank 1's stall dashboard: every link of every page
/// reached (kernel pages, hot spots in the assembly view, the kernel
/// chooser) stays on rank 1's stall file and shows its numbers; the pages
/// link back to the index.
#[test]
fn stall_dashboard_links_from_the_index_keep_the_rank() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_tree(d);
    let server = start(d);
    let port = server.port();
    let index = get(port, "/").text();
    let own = file(d, 1, 1);
    let dashboard = "/perfdashboard?rank=1&device=1";
    assert!(
        links_of(&index).iter().any(|l| l == dashboard),
        "the index links to rank 1's stall file: {index}"
    );
    let others = [file(d, 0, 0), file(d, 0, 1), file(d, 1, 0)];
    let found = crawl(port, dashboard, 1, &own, &others, &index, &|_| None);
    // The dashboard, the kernels' pages (rank 1 ran two of rank 0's
    // three kernels) and the chooser's answer.
    let rows = stall_rows(&own);
    let rank_0 = stall_rows(&file(d, 0, 1));
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rank_0.len(), 3, "{rank_0:?}");
    assert!(found.pages > rows.len(), "{}", found.pages);
    assert!(found.spot_links > 0, "hot spots link to the assembly view");
    assert!(found.back_links >= found.pages);
    // Each kernel page has rank 1's rows, not rank 0's, and its assembly.
    for (kernel, n) in &rows {
        let url = format!("/perfdashboard?kernel={}&rank=1&device=1", encode(kernel));
        let page = found
            .html
            .get(&url)
            .unwrap_or_else(|| panic!("{url} was not reached"));
        assert_ne!(rank_0.get(kernel), Some(n), "{kernel}: the ranks differ");
        assert!(page.contains(&format!("{n} IP row(s)")), "{url}");
        assert!(page.contains("<pre class=\"asm\">"), "{url}");
        // "All kernels" is rank 1's stall dashboard, not the index.
        assert_eq!(
            header_links(page)[1],
            ("All kernels".to_string(), dashboard.to_string())
        );
    }
    assert!(!found.html[dashboard].contains("gen_conv"));

    // A trace link of rank 1 (as the merged trace carries it), opened as
    // HTML: its links, the relative PDF link included, stay on rank 1.
    let (kernel, n) = rows.iter().next().unwrap();
    let from_trace = format!("{}?format=html&rank=1", link(kernel, 0));
    let found = crawl(port, &from_trace, 1, &own, &others, &index, &|_| None);
    assert!(found.pdfs >= 1, "the PDF link was followed");
    assert!(found.html[&from_trace].contains(&format!("{n} IP row(s)")));
    let (code, _) = server.interrupt();
    assert_eq!(code, Some(0));
}

/// From the index to rank 1's metric dashboard: its instance links (built
/// by its script, read from Chromium's DOM), the instance pages, their
/// PDF, "All kernels" and "compare with" requests stay on rank 1's file
/// and show its numbers; the pages link back to the index.
#[test]
fn metric_dashboard_links_from_the_index_keep_the_rank() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_tree(d);
    let server = start(d);
    let port = server.port();
    let index = get(port, "/").text();
    let own = file(d, 1, 0);
    let dashboard = "/perfdashboard?rank=1&device=0";
    assert!(
        links_of(&index).iter().any(|l| l == dashboard),
        "the index links to rank 1's metric file"
    );
    let others = [file(d, 0, 0), file(d, 0, 1), file(d, 1, 1)];
    let dom_of = |url: &str| {
        (url == dashboard).then(|| chromium_dom(&format!("http://127.0.0.1:{port}{url}")))
    };
    let found = crawl(port, dashboard, 0, &own, &others, &index, &dom_of);
    let times = gpu_times(&own);
    let rank_0 = gpu_times(&file(d, 0, 0));
    // The dashboard, every instance page and each one's PDF.
    assert_eq!(found.pages, 1 + times.len(), "{:?}", found.html.keys());
    assert_eq!(found.pdfs, times.len());
    for (id, ns) in &times {
        let (url, page) = found
            .html
            .iter()
            .find(|(url, _)| url.starts_with(&format!("/perfdashboard?gid={id}&")))
            .unwrap_or_else(|| panic!("instance {id} was not reached"));
        assert!(page.contains(&format!("GlobalInstanceId {id}")), "{url}");
        assert_eq!(
            header_links(page)[1],
            ("All kernels".to_string(), dashboard.to_string())
        );
        // "Compare with" asks rank 1's file: the script adds the route of
        // the page's config to its request.
        assert!(page.contains("\"route\":\"rank=1&device=0\""), "{url}");
        let json = get(
            port,
            &format!("/perfdashboard?gid={id}&format=json&rank=1&device=0"),
        );
        assert_eq!(json.status, 200);
        let value: serde_json::Value = serde_json::from_slice(&json.body).unwrap();
        assert_eq!(
            value["counters"]["GpuTime[ns]"][0].as_f64(),
            Some(*ns),
            "{id}"
        );
    }
    // The ranks reuse the instance ids with other numbers.
    assert!(times
        .iter()
        .any(|(id, ns)| rank_0.get(id).is_some_and(|r0| r0 != ns)));
    let (code, _) = server.interrupt();
    assert_eq!(code, Some(0));
}

/// `analyze -q` on one file: no index to go back to, links unchanged.
#[test]
fn a_single_file_server_has_no_back_link() {
    let stalls = fixtures().join("stalls/rank_1.app.101/metrics/metrics_1.csv");
    let server = Server::analyze(&["-q", stalls.to_str().unwrap()]);
    let port = server.port();
    let page = get(port, "/").text();
    assert!(header_links(&page).is_empty(), "{page}");
    assert!(!page.contains("type=\"hidden\""));
    let kernel = "triton_poi_fused_add_0";
    assert!(page.contains(&format!("href=\"/perfdashboard?kernel={kernel}\"")));
    let page = get(port, &format!("/perfdashboard?kernel={kernel}")).text();
    assert_eq!(
        header_links(&page),
        [("All kernels".to_string(), "/".to_string())]
    );
    drop(server);
    let options = testdata("options.txt");
    let metrics = fixtures().join("metrics/rank_1.app.101/metrics/metrics_0.csv");
    let server = Server::analyze(&[
        "-q",
        "-f",
        options.to_str().unwrap(),
        metrics.to_str().unwrap(),
    ]);
    let page = get(server.port(), "/perfdashboard?gid=3").text();
    let header = header_links(&page);
    assert_eq!(header[0], ("All kernels".to_string(), "/".to_string()));
    assert!(header[1].1.ends_with("/3"), "{header:?}");
    assert!(page.contains("\"route\":\"\""));
}
