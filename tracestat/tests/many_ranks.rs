//! The HTML page and the heatmap stay readable from 1 to 4096 ranks
//! (docs/tracestat.md#html-page): 4096 tiny rank files, one of them a
//! straggler, give a page whose pictures have a bounded number of rows and
//! pixels, the straggler's own row on top and labels that do not overlap.
//! How the page looks was also checked in headless Chromium by eye
//! (docs/tracestat.md#html-page).

use crate::common::*;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

const T: f64 = 1_700_000_000_000_000.0;
const STRAGGLER: u32 = 3000;

/// Rank `r`: a gemm of 100 us (400 us on the straggler) launched at 0,
/// then an allreduce the others enter at 120 us and the straggler at
/// 450 us; all leave it at 500 us.
fn rank_file(dir: &Path, r: u32) -> PathBuf {
    let ts = |us: f64| format!("{:.6}", T + us);
    let (pid, dev) = (
        10_000 + r as u64,
        4_294_967_295u64 - ((r as u64) << 5) % (1 << 31),
    );
    let (gemm, arrive) = if r == STRAGGLER {
        (400.0, 450.0)
    } else {
        (100.0, 120.0)
    };
    let events = [
        format!("{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {pid}, \"ts\": {}, \"args\": {{\"name\": \"RANK {r} HOST<n>\"}}}}", ts(0.0)),
        format!("{{\"ph\": \"X\", \"tid\": {dev}, \"pid\": {dev}, \"name\": \"gemm\", \"cat\": \"gpu_op\", \"ts\": {}, \"dur\": {gemm:.6}, \"args\": {{\"id\": \"1\"}}}}", ts(10.0)),
        format!("{{\"ph\": \"X\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"zeCommandListAppendLaunchKernel\", \"cat\": \"cpu_op\", \"ts\": {}, \"dur\": 1.000000, \"id\": 0}}", ts(0.0)),
        format!("{{\"ph\": \"s\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"dep\", \"cat\": \"Flow_H2D_1_{r}\", \"ts\": {}, \"id\": 1}}", ts(0.0)),
        format!("{{\"ph\": \"X\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"oneCCL::API::ALLREDUCE_SMALL\", \"cat\": \"cpu_op\", \"ts\": {}, \"dur\": {:.6}, \"args\": {{\"send_size\":[4096]}}}}", ts(arrive), 500.0 - arrive),
    ];
    let path = dir.join(format!("app.{pid}.{r}.json"));
    std::fs::write(
        &path,
        format!("{{ \"traceEvents\":[\n{}\n]\n}}\n", events.join(",\n")),
    )
    .unwrap();
    path
}

/// The `n`-th `<svg ...>...</svg>` of a page.
fn svg(page: &str, n: usize) -> &str {
    let start = page.match_indices("<svg").nth(n).unwrap().0;
    let end = start + page[start..].find("</svg>").unwrap() + 6;
    &page[start..end]
}

/// The value of attribute `name` of the first tag of `s`.
fn attr(s: &str, name: &str) -> f64 {
    let key = format!(" {name}=\"");
    let at = s.find(&key).unwrap() + key.len();
    s[at..at + s[at..].find('"').unwrap()].parse().unwrap()
}

/// `(y, text)` of the row labels (right-aligned texts) of an SVG.
fn row_labels(svg: &str) -> Vec<(f64, String)> {
    svg.match_indices("<text class=\"row-label\"")
        .map(|(i, _)| &svg[i..])
        .map(|t| {
            let text = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            (attr(t, "y"), text.to_string())
        })
        .collect()
}

/// The distinct `y` of the heatmap's cells (one per drawn row).
fn cell_rows(svg: &str) -> Vec<String> {
    let mut ys: Vec<String> = svg
        .match_indices("<rect class=\"cell\"")
        .map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap()])
        .map(|tag| {
            let at = tag.find(" y=\"").unwrap() + 4;
            tag[at..at + tag[at..].find('"').unwrap()].to_string()
        })
        .collect();
    ys.sort();
    ys.dedup();
    ys
}

/// The page, the heatmap CSV and the console report of one run.
fn html_of(files: &[PathBuf], dir: &Path) -> (String, String, String) {
    let html = dir.join("r.html");
    let csv = dir.join("csv");
    let mut args: Vec<&OsStr> = files.iter().map(|p| p.as_os_str()).collect();
    args.extend([
        OsStr::new("--html"),
        html.as_os_str(),
        OsStr::new("--csv"),
        csv.as_os_str(),
    ]);
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        std::fs::read_to_string(&html).unwrap(),
        std::fs::read_to_string(csv.join("heatmap.csv")).unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn page_for_4096_ranks_groups_rows_and_keeps_the_straggler_apart() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("traces");
    std::fs::create_dir(&traces).unwrap();
    let files: Vec<PathBuf> = (0..4096).map(|r| rank_file(&traces, r)).collect();
    let (page, heat_csv, stdout) = html_of(&files, dir.path());

    // The CSV has every rank, in rank order (numeric: 9 before 10).
    let ranks: Vec<&str> = heat_csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    let expected: Vec<String> = (0..4096).map(|r| r.to_string()).collect();
    assert_eq!(ranks, expected);

    assert!(page.len() < 2_000_000, "page of {} bytes", page.len());
    assert!(page.contains(&format!(
        "<p>Straggler: rank {STRAGGLER}: arrived last at 1 of 1"
    )));
    assert!(page.contains("4096 ranks in groups of 64: each bar is the group"));
    assert!(page.contains("4096 ranks in groups of 16: each row is the group"));

    // Breakdown bars: the straggler's, then 64 groups of 64 ranks.
    let bars = svg(&page, 0);
    let labels = row_labels(bars);
    assert_eq!(labels.len(), 65);
    assert_eq!(labels[0].1, format!("rank {STRAGGLER} (straggler)"));
    assert_eq!(labels[1].1, "ranks 0-63");
    assert_eq!(labels[64].1, "ranks 4032-4095");
    assert!(attr(bars, "height") < 1300.0, "{}", attr(bars, "height"));

    // Heatmap: the straggler's row, then 256 groups of 16 ranks, in at
    // most 900 px; labels at least 11 px apart.
    let heat = svg(&page, 1);
    assert_eq!(cell_rows(heat).len(), 257);
    assert!(attr(heat, "height") <= 900.0, "{}", attr(heat, "height"));
    let labels = row_labels(heat);
    assert_eq!(labels[0].1, format!("rank {STRAGGLER} (straggler)"));
    // The straggler's row is 12 px high and set apart; then about every
    // 4th group row (3.06 px each) is labelled.
    assert_eq!(labels[1].1, "ranks 0-15");
    assert_eq!(labels[2].1, "ranks 64-79");
    assert_eq!(labels.last().unwrap().1, "ranks 4032-4047");
    assert!(labels.len() > 40, "{}", labels.len());
    for w in labels.windows(2) {
        assert!(w[1].0 - w[0].0 >= 11.0, "labels overlap: {w:?}");
    }

    // The console's per-rank tables show 32 of the 4096 ranks, the
    // straggler among them: a report of a few hundred lines, not 25 000.
    assert!(
        stdout.lines().count() < 400,
        "{} lines",
        stdout.lines().count()
    );
    assert!(stdout.contains("\nPer-rank tables show 32 of 4096 ranks "));
    assert!(stdout.contains(&format!("\n  straggler: {STRAGGLER}\n")));
    assert_eq!(
        stdout
            .matches("\n(4064 more ranks not shown: --rank-rows all)\n")
            .count(),
        5
    );

    // The console heatmap: the straggler's line, then 16 groups of 256
    // ranks, 50 columns of 4 bins. Everyone computes 10-110 us of the
    // 500 us run (columns 1 to 11), the straggler until 410 us.
    let heat: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("GPU utilisation over time"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(heat.len(), 17, "{stdout}");
    let (label, cells) = heat[0].split_once(" |").unwrap();
    assert_eq!(label.trim(), format!("rank {STRAGGLER} (straggler)"));
    assert_eq!(heat[1].split_once(" |").unwrap().0.trim(), "ranks 0-255");
    assert_eq!(
        heat[16].split_once(" |").unwrap().0.trim(),
        "ranks 3840-4095"
    );
    let busy = |cells: &str| cells.chars().filter(|c| *c == '@').count();
    assert_eq!(cells.chars().count(), 51, "50 columns and the closing bar");
    assert!(busy(cells) >= 38, "{cells}");
    let (_, group) = heat[1].split_once(" |").unwrap();
    assert!((8..=11).contains(&busy(group)), "{group}");
}

#[test]
fn page_for_one_rank() {
    let dir = tempfile::tempdir().unwrap();
    let (page, heat_csv, _) = html_of(&[rank_file(dir.path(), 0)], dir.path());
    assert_eq!(heat_csv.lines().count(), 2);
    let heat = svg(&page, 1);
    assert_eq!(cell_rows(heat).len(), 1);
    let labels: Vec<String> = row_labels(heat).into_iter().map(|l| l.1).collect();
    assert_eq!(labels, ["rank 0"]);
    assert_eq!(attr(heat, "height"), 10.0 + 18.0 + 80.0);
    assert_eq!(row_labels(svg(&page, 0)).len(), 1);
    // A 500 us run: the time axis is in microseconds, not "0.0 ms" ticks.
    assert!(heat.contains(">500 us</text>"), "{heat}");
    assert!(!page.contains("groups of"));
    // Nothing to compare one rank with: no straggler named or marked.
    assert!(
        page.contains("<p>Straggler: none: one rank, nothing to compare with</p>"),
        "{page}"
    );
    assert!(!page.contains("(straggler)"));
    assert!(!page.contains("Straggler: rank"));
}
