//! The index of `uniview --result-dir` (docs/uniview.md#result-dir-index),
//! over HTTP against a served tree built from the bundled metric files of
//! testdata/uniview-resdir/metrics (four ranks, rank 1 with two devices,
//! rank 2 a straggler): every file with its rank, device, kernels,
//! instances, GPU time and top kernels, the kernels across ranks, links
//! that reach each file's dashboard; a bad file listed with its error
//! while the others are served.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::server_chromium::chromium_dom;
use crate::server_common::*;

const UNIVIEW: &str = env!("CARGO_BIN_EXE_uniview");

fn bundled() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/uniview-resdir/metrics")
}

/// The bundled tree copied to `d`, with the server testdata's trace as
/// each rank's `chrome_trace.json` (uniview wants a trace). Returns the
/// metric files, relative to `d`, sorted.
fn build_tree(d: &Path) -> Vec<String> {
    let mut files = Vec::new();
    for rank in std::fs::read_dir(bundled()).unwrap() {
        let rank = rank.unwrap().path();
        if !rank.is_dir() {
            continue;
        }
        let name = rank.file_name().unwrap().to_owned();
        let target = d.join(&name);
        std::fs::create_dir_all(target.join("metrics")).unwrap();
        std::fs::copy(testdata("trace.json"), target.join("chrome_trace.json")).unwrap();
        for csv in std::fs::read_dir(rank.join("metrics")).unwrap() {
            let csv = csv.unwrap().path();
            let file = csv.file_name().unwrap();
            std::fs::copy(&csv, target.join("metrics").join(file)).unwrap();
            files.push(format!(
                "{}/metrics/{}",
                name.to_string_lossy(),
                file.to_string_lossy()
            ));
        }
    }
    files.sort();
    files
}

/// `rank_<r>.app.<pid>/metrics/metrics_<d>.csv` → (r, d).
fn rank_device(file: &str) -> (u32, u32) {
    let rank = file
        .strip_prefix("rank_")
        .and_then(|r| r.split('.').next())
        .unwrap();
    let device = file
        .rsplit("metrics_")
        .next()
        .and_then(|d| d.strip_suffix(".csv"))
        .unwrap();
    (rank.parse().unwrap(), device.parse().unwrap())
}

/// A kernel of a query-mode metric file, read here independently of the
/// server: instances, first GlobalInstanceId, sum of `GpuTime[ns]`.
#[derive(Debug, Clone, PartialEq)]
struct Kernel {
    instances: usize,
    first_id: u64,
    gpu_ns: u64,
}

/// The quoted kernel name and the other fields of a query row (names may
/// hold commas, never a quote followed by a comma).
fn split_row(line: &str) -> (String, Vec<&str>) {
    let rest = line.strip_prefix('"').unwrap();
    let (name, fields) = rest.split_once("\",").unwrap();
    (name.to_string(), fields.split(',').collect())
}

fn kernels_of(path: &Path) -> BTreeMap<String, Kernel> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[0], "Kernel");
    // Field positions after the kernel name.
    let id_at = header
        .iter()
        .position(|h| *h == "GlobalInstanceId")
        .unwrap()
        - 1;
    let time_at = header.iter().position(|h| *h == "GpuTime[ns]").unwrap() - 1;
    // Reports flagged invalid would be left out by the server
    // (docs/analyze.md#report-validity): the bundled files have none.
    let invalid: Vec<usize> = [
        "ReportError",
        "ReportLost",
        "ReportInconsistent",
        "ReportWithoutWorkload",
        "ReportContextMismatch",
        "ReportQueryModeMismatch",
        "OverrunOccured",
    ]
    .iter()
    .filter_map(|c| header.iter().position(|h| h == c))
    .map(|at| at - 1)
    .collect();
    let mut out: BTreeMap<String, Kernel> = BTreeMap::new();
    for line in lines {
        let (name, fields) = split_row(line);
        for &at in &invalid {
            assert_eq!(fields[at], "0", "{}: {line}", path.display());
        }
        let id: u64 = fields[id_at].parse().unwrap();
        let ns: u64 = fields[time_at].parse().unwrap();
        let k = out.entry(name).or_insert(Kernel {
            instances: 0,
            first_id: id,
            gpu_ns: 0,
        });
        k.instances += 1;
        k.gpu_ns += ns;
    }
    out
}

fn start(d: &Path) -> Server {
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

/// `&` as the page writes it inside an attribute.
fn attr(url: &str) -> String {
    url.replace('&', "&amp;")
}

/// The `<tr>` of the kernels-across-ranks table for `kernel`.
fn across_row<'a>(page: &'a str, kernel: &str) -> &'a str {
    let table = page.split("id=\"across\"").nth(1).unwrap();
    let start = format!("<tr data-kernel=\"{}\"", html_escape(kernel));
    let row = table
        .split_once(&start)
        .unwrap_or_else(|| panic!("no row for {kernel}"))
        .1;
    row.split("</tr>").next().unwrap()
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// `GET /` lists every file with rank, device, kernel count, instances,
/// GPU time and top kernels, and each kernel's GPU time on each rank with
/// the min rank, median, max rank and max/median; the links reach each
/// file's dashboard and the instance pages of the right rank.
#[test]
fn the_index_lists_every_file_and_each_kernel_across_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = build_tree(d);
    assert_eq!(files.len(), 5, "{files:?}");
    let server = start(d);
    let port = server.port();
    let index = get(port, "/");
    assert_eq!(index.status, 200, "{}", index.text());
    assert_eq!(
        index.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let page = index.text();
    // The dashboard look, offline.
    assert!(page.contains("<header class=\"top\">"));
    assert!(page.contains("window.UD"));
    assert!(!page.contains("<script src") && !page.contains("<link"));

    // Expected figures, from the CSVs themselves.
    let mut per_file = Vec::new();
    // kernel -> rank -> ns
    let mut across: BTreeMap<String, BTreeMap<u32, u64>> = BTreeMap::new();
    for f in &files {
        let (rank, device) = rank_device(f);
        let kernels = kernels_of(&d.join(f));
        for (name, k) in &kernels {
            *across
                .entry(name.clone())
                .or_default()
                .entry(rank)
                .or_default() += k.gpu_ns;
        }
        per_file.push((f.clone(), rank, device, kernels));
    }
    let instances: usize = per_file
        .iter()
        .flat_map(|(_, _, _, k)| k.values().map(|k| k.instances))
        .sum();
    assert!(
        page.contains(&format!(
            "{} \u{b7} 5 metric files \u{b7} 4 ranks \u{b7} {} kernels \u{b7} {instances} instances \u{b7} GPU time ",
            d.display(),
            across.len()
        )),
        "{page}"
    );

    // One row per file: rank, device, its dashboard link, kernels,
    // instances, GPU time (exact, in data-v), its top kernel linked to its
    // first instance on that rank and device.
    for (f, rank, device, kernels) in &per_file {
        let row = page
            .split(&format!("<tr data-file=\"{f}\">"))
            .nth(1)
            .unwrap_or_else(|| panic!("no row for {f}"));
        let row = row.split("</tr>").next().unwrap();
        let route = format!("rank={rank}&device={device}");
        assert!(
            row.starts_with(&format!(
                "<td data-v=\"{rank}\">{rank}</td><td class=\"num\">{device}</td>"
            )),
            "{row}"
        );
        assert!(
            row.contains(&format!(
                "href=\"{}\"",
                attr(&format!("/perfdashboard?{route}"))
            )),
            "{row}"
        );
        let count = kernels.len();
        let inst: usize = kernels.values().map(|k| k.instances).sum();
        let gpu: u64 = kernels.values().map(|k| k.gpu_ns).sum();
        assert!(
            row.contains(&format!(
                "<td class=\"num\" data-v=\"{count}\">{count}</td><td class=\"num\" data-v=\"{inst}\">{inst}</td><td class=\"num\" data-v=\"{gpu}\">"
            )),
            "{row}"
        );
        let (top, k) = kernels.iter().max_by_key(|(_, k)| k.gpu_ns).unwrap();
        let instance = format!("/perfdashboard?gid={}&{route}", k.first_id);
        let top_link = row.split("<ol class=\"top\"><li>").nth(1).unwrap();
        assert!(
            top_link.starts_with(&format!(
                "<a href=\"{}\" title=\"{}\">",
                attr(&instance),
                html_escape(top)
            )),
            "{top_link}"
        );
        // The link reaches that instance on that rank and device.
        let answer = get(port, &instance);
        assert_eq!(answer.status, 200, "{instance}: {}", answer.text());
        let text = answer.text();
        assert!(text.contains(&html_escape(top)), "{instance}");
        assert!(
            text.contains(&format!("GlobalInstanceId {}", k.first_id)),
            "{instance}"
        );
        assert!(
            text.contains(&d.join(f).display().to_string()),
            "{instance}"
        );
        // The file's own dashboard, from its link.
        let own = get(port, &format!("/perfdashboard?{route}"));
        assert_eq!(own.status, 200);
        assert!(own.text().contains(&d.join(f).display().to_string()));
        assert!(own.text().contains("id=\"index-data\""));
    }

    // Per kernel: ranks that ran it, total, min rank, median, max rank.
    for (name, ranks) in &across {
        let row = across_row(&page, name);
        let mut values: Vec<(u32, u64)> = ranks.iter().map(|(&r, &v)| (r, v)).collect();
        let total: u64 = values.iter().map(|v| v.1).sum();
        // The tooltip names the ranks without it.
        let missing: Vec<String> = (0..4)
            .filter(|r| !ranks.contains_key(r))
            .map(|r| format!("rank {r}"))
            .collect();
        let title = if missing.is_empty() {
            String::new()
        } else {
            format!(" title=\"not on {}\"", missing.join(", "))
        };
        assert!(
            row.contains(&format!(
                "<td class=\"num\" data-v=\"{0}\"{title}>{0}/4</td>",
                values.len()
            )),
            "{name}: {row}"
        );
        assert!(
            row.contains(&format!("<td class=\"num\" data-v=\"{total}\">")),
            "{name}: {row}"
        );
        let min = *values.iter().min_by_key(|v| (v.1, v.0)).unwrap();
        let max = *values
            .iter()
            .max_by_key(|v| (v.1, std::cmp::Reverse(v.0)))
            .unwrap();
        values.sort_by_key(|v| v.1);
        let n = values.len();
        let median = if n % 2 == 1 {
            values[n / 2].1 as f64
        } else {
            (values[n / 2 - 1].1 + values[n / 2].1) as f64 / 2.0
        };
        // After the kernel, ranks, instances and total cells.
        let cells: Vec<&str> = row.split("<td class=\"num").skip(4).collect();
        assert!(
            cells[0].starts_with(&format!("\" data-v=\"{}\">", min.1)),
            "{name}: {row}"
        );
        assert!(cells[0].contains(&format!("<span class=\"hint\">rank {}</span>", min.0)));
        assert!(
            cells[1].starts_with(&format!("\" data-v=\"{median}\">")),
            "{name}: {row}"
        );
        assert!(
            cells[2].starts_with(&format!("\" data-v=\"{}\">", max.1)),
            "{name}: {row}"
        );
        assert!(cells[2].contains(&format!("<span class=\"hint\">rank {}</span>", max.0)));
    }
    // Rank 2 is the straggler (testdata/uniview-resdir/README.md): the
    // slowest rank overall and the max rank, flagged, of every kernel it ran.
    assert!(
        page.contains("id=\"slowest-rank\">Slowest: <b>rank 2</b>"),
        "{page}"
    );
    for (name, ranks) in &across {
        if ranks.contains_key(&2) && ranks.len() > 1 {
            let row = across_row(&page, name);
            assert!(row.starts_with(" class=\"slow\">"), "{name}: {row}");
            assert!(row.contains("<span class=\"hint\">rank 2</span></td><td class=\"num ratio\""));
        }
    }
    // A rank's time links to that rank's dashboard filtered to the kernel.
    let (name, _) = across.iter().next().unwrap();
    let row = across_row(&page, name);
    let href = row
        .split("<a href=\"")
        .nth(1)
        .and_then(|h| h.split('"').next())
        .unwrap()
        .replace("&amp;", "&");
    assert!(href.starts_with("/perfdashboard?rank="), "{href}");
    assert!(href.contains(&format!("&q={}", encode(name))), "{href}");
    let filtered = get(port, &href);
    assert_eq!(filtered.status, 200);
    assert!(filtered.text().contains("id=\"index-data\""));

    // /perfdashboard without keys is this index too.
    let again = get(port, "/perfdashboard");
    assert_eq!(again.status, 200);
    assert_eq!(again.text(), page);
    let (code, _) = server.interrupt();
    assert_eq!(code, Some(0));
}

/// A file's own dashboard, opened from the index, keeps its routing keys
/// in the links its script builds (otherwise an instance link of rank 2
/// would be answered by rank 0's file, whose ids are the same).
#[test]
fn chromium_builds_instance_links_that_keep_the_rank() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_tree(d);
    let server = start(d);
    let port = server.port();
    let dom = chromium_dom(&format!(
        "http://127.0.0.1:{port}/perfdashboard?rank=2&device=0"
    ));
    let links: Vec<&str> = dom
        .split("href=\"/perfdashboard?gid=")
        .skip(1)
        .map(|l| l.split('"').next().unwrap())
        .collect();
    assert!(!links.is_empty(), "{dom}");
    for l in &links {
        assert!(l.ends_with("&amp;rank=2&amp;device=0"), "{l}");
    }
    // The index's own script ran: the kernel filter counts its rows.
    let dom = chromium_dom(&format!("http://127.0.0.1:{port}/"));
    let kernels = dom.matches("<tr data-kernel=").count();
    assert!(kernels > 0);
    assert!(
        dom.contains(&format!("{kernels} of {kernels} kernels shown")),
        "{dom}"
    );
    let (code, _) = server.interrupt();
    assert_eq!(code, Some(0));
}

/// The metric file of the first rank is malformed and another one is
/// empty: both are listed with their one-line errors, warned about once
/// on stderr, answer 404 with the reason, and every other file is served.
#[test]
fn a_bad_metric_file_is_listed_with_its_error_and_the_others_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = build_tree(d);
    // Rank 0 (the first file, whose kind and options uniview checks
    // first): its second row gets an instance id that is no number.
    let bad = d.join(&files[0]);
    let text = std::fs::read_to_string(&bad).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let at = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with('"'))
        .nth(1)
        .map(|(i, _)| i)
        .unwrap();
    let (name, fields) = split_row(&lines[at]);
    let mut fields: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
    fields[0] = "x7".to_string();
    lines[at] = format!("\"{name}\",{}", fields.join(","));
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    // Rank 1's second device: rank 1 keeps its first one.
    assert_eq!(rank_device(&files[2]), (1, 1));
    let empty = d.join(&files[2]);
    std::fs::write(&empty, "").unwrap();
    let before: Vec<Vec<u8>> = [&bad, &empty]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();

    let mut server = start(d);
    let mut stderr = server.child.stderr.take().unwrap();
    let port = server.port();
    let page = get(port, "/").text();
    let parse_error = format!(
        "{}:{}: column `GlobalInstanceId`: `x7` is not an instance id",
        bad.display(),
        at + 1
    );
    let row = page
        .split(&format!("<tr data-file=\"{}\">", files[0]))
        .nth(1)
        .unwrap();
    assert!(
        row.starts_with(&format!(
            "<td data-v=\"0\">0</td><td class=\"num\">0</td><td class=\"path\"><code>{}</code></td><td colspan=\"4\"><p class=\"error\">{}</p></td></tr>",
            files[0],
            html_escape(&parse_error)
        )),
        "{row}"
    );
    let empty_error = format!("File {} is empty", empty.display());
    assert!(
        page.contains(&format!(
            "<p class=\"error\">{}</p>",
            html_escape(&empty_error)
        )),
        "{page}"
    );
    assert!(
        page.contains("5 metric files (2 unreadable) \u{b7} 3 ranks"),
        "{page}"
    );
    // The other files: listed with their kernels and served.
    for f in [&files[1], &files[3], &files[4]] {
        let (rank, device) = rank_device(f);
        let row = page
            .split(&format!("<tr data-file=\"{f}\">"))
            .nth(1)
            .unwrap()
            .split("</tr>")
            .next()
            .unwrap();
        assert!(row.contains("<ol class=\"top\">"), "{row}");
        let kernels = kernels_of(&d.join(f));
        let (kernel, k) = kernels.iter().next().unwrap();
        let answer = get(
            port,
            &format!(
                "{}?format=html&rank={rank}&device={device}",
                link(kernel, k.first_id)
            ),
        );
        assert_eq!(answer.status, 200, "{f}: {}", answer.text());
        assert!(answer.text().contains(&d.join(f).display().to_string()));
    }
    // Rank 0's links and dashboard say why they cannot be answered.
    let why =
        format!("The metric file of rank 0 in the result directory cannot be read: {parse_error}");
    let answer = get(port, &format!("{}?rank=0", link("k", 1)));
    assert_eq!(answer.status, 404);
    assert_eq!(answer.text(), why);
    let answer = get(port, "/perfdashboard?gid=1&rank=0");
    assert_eq!(answer.status, 404);
    assert_eq!(answer.text(), why);
    let (code, _) = server.interrupt();
    assert_eq!(code, Some(0));
    let mut warnings = String::new();
    stderr.read_to_string(&mut warnings).unwrap();
    // (The other lines are the files' doubtful-report notes,
    // docs/analyze.md#report-validity.)
    let warnings: Vec<&str> = warnings
        .lines()
        .filter(|l| l.contains("not served"))
        .collect();
    assert_eq!(
        warnings,
        [
            format!(
                "uniview: warning: {parse_error} (this metric file is not served; the others are)"
            ),
            format!(
                "uniview: warning: {empty_error} (this metric file is not served; the others are)"
            ),
        ],
    );
    // Inputs untouched.
    let after: Vec<Vec<u8>> = [&bad, &empty]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_eq!(after, before);
}

/// When no metric file can be served, uniview stops with the first one's
/// error (exit 1), as with `-m` of a bad file.
#[test]
fn no_readable_metric_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let files = build_tree(d);
    for f in &files {
        std::fs::write(
            d.join(f),
            "Kernel,GlobalInstanceId,GpuTime[ns]\n\"k\",x,1\n",
        )
        .unwrap();
    }
    let options = testdata("options.txt");
    let output = Command::new(UNIVIEW)
        .args([
            "--trace-port",
            "0",
            "--port",
            "0",
            "--no-browser",
            "--result-dir",
        ])
        .arg(d)
        .arg("-f")
        .arg(&options)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    // (After the warning that --port 0 is not where the trace's links point.)
    let last = stderr.lines().last().unwrap_or_default();
    assert_eq!(
        format!("{last}\n"),
        format!(
            "uniview: {}:2: column `GlobalInstanceId`: `x` is not an instance id\n",
            d.join(&files[0]).display()
        )
    );
}
