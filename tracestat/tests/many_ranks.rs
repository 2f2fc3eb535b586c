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
        stdout.lines().count() < 520,
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
        .skip_while(|l| !l.starts_with("(a column = "))
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

/// Rank `r` of the heatmap's known answers: a host call at 0 and one
/// ending at 409.6 us (the wall of every rank: four bins of 102.4 us,
/// each 200 fine bins of 512 ns, so nothing spreads across a bin edge),
/// and one kernel of `(r + 1) x 10.24 us` at the start of bin `r % 4`:
/// rank `r` is `(r + 1) / 10` busy in that bin and idle in the others.
fn busy_rank_file(dir: &Path, r: u32) -> PathBuf {
    // Times in ns, written as exact decimals of us (an f64 of the absolute
    // time in us holds only quarters of a microsecond).
    let us = |ns: u64| format!("{}.{:03}", ns / 1000, ns % 1000);
    let ts = |ns: u64| us(T as u64 * 1000 + ns);
    let (pid, dev) = (20_000 + r, 30_000 + r);
    let (start, dur) = (102_400 * (r as u64 % 4), 10_240 * (r as u64 + 1));
    let events = [
        format!("{{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": {pid}, \"ts\": {}, \"args\": {{\"name\": \"RANK {r} HOST<n>\"}}}}", ts(0)),
        format!("{{\"ph\": \"X\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"zeInit\", \"cat\": \"cpu_op\", \"ts\": {}, \"dur\": 1.000}}", ts(0)),
        format!("{{\"ph\": \"X\", \"tid\": {dev}, \"pid\": {dev}, \"name\": \"gemm\", \"cat\": \"gpu_op\", \"ts\": {}, \"dur\": {}}}", ts(start), us(dur)),
        format!("{{\"ph\": \"X\", \"tid\": {pid}, \"pid\": {pid}, \"name\": \"zeFinish\", \"cat\": \"cpu_op\", \"ts\": {}, \"dur\": 1.000}}", ts(408_600)),
    ];
    let path = dir.join(format!("app.{pid}.{r}.json"));
    std::fs::write(
        &path,
        format!("{{ \"traceEvents\":[\n{}\n]\n}}\n", events.join(",\n")),
    )
    .unwrap();
    path
}

/// `(label, utilisation per bin)` of every heatmap row of a report.
fn heat_rows(doc: &serde_json::Value) -> Vec<(String, Vec<f64>)> {
    doc["heatmap"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let util = r[1].as_array().unwrap().iter().map(f).collect();
            (r[0].as_str().unwrap().to_string(), util)
        })
        .collect()
}

fn assert_rows(got: &[(String, Vec<f64>)], expected: &[(&str, [f64; 4])]) {
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for ((label, util), (want_label, want)) in got.iter().zip(expected) {
        assert_eq!(label, want_label);
        for (b, (g, w)) in util.iter().zip(want).enumerate() {
            assert!((g - w).abs() < 1e-9, "row {label} bin {b}: {g} != {w}");
        }
    }
}

#[test]
fn heatmap_groups_ten_ranks_into_rows_of_their_mean() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..10).map(|r| busy_rank_file(dir.path(), r)).collect();
    let csv = dir.path().join("csv");
    let (doc, stdout, _) = report(
        &files,
        &[
            "--bins",
            "4",
            "--heat-rows",
            "5",
            "--csv",
            csv.to_str().unwrap(),
        ],
    );
    close(f(&doc["heatmap"]["bin_us"]), 102.4, "bin width");
    assert_eq!(doc["heatmap"]["ranks_per_row"], 2);
    // Ranks 2i and 2i+1 share row i: rank r is (r+1)/10 busy in bin r % 4.
    assert_rows(
        &heat_rows(&doc),
        &[
            ("0-1", [0.05, 0.10, 0.0, 0.0]),
            ("2-3", [0.0, 0.0, 0.15, 0.20]),
            ("4-5", [0.25, 0.30, 0.0, 0.0]),
            ("6-7", [0.0, 0.0, 0.35, 0.40]),
            ("8-9", [0.45, 0.50, 0.0, 0.0]),
        ],
    );
    // No rank stands out: no straggler row of its own.
    assert!(doc["straggler"].is_null());
    assert!(doc["heatmap"].get("straggler_row").is_none());
    let text = std::fs::read_to_string(csv.join("heatmap.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "rank,from_0.000_us,from_102.400_us,from_204.800_us,from_307.200_us"
    );
    assert_eq!(lines[1], "0-1,0.0500,0.1000,0.0000,0.0000");
    assert_eq!(lines[5], "8-9,0.4500,0.5000,0.0000,0.0000");
    assert_eq!(lines.len(), 6);
    // The console draws the table's rows, scaled to the busiest cell
    // (50%): 0.05 and 0.10 are a tenth and a fifth of it.
    assert!(
        stdout.contains("@' 50.000% busy, the busiest cell)\nranks 0-1 |.:  |\n"),
        "{stdout}"
    );
    assert!(stdout.contains("\nranks 8-9 |%@  |\n"), "{stdout}");

    // Groups of 3 when at most 4 rows: the last group is rank 9 alone.
    let (doc, _, _) = report(&files, &["--bins", "4", "--heat-rows", "4"]);
    assert_eq!(doc["heatmap"]["ranks_per_row"], 3);
    let third = 1.0 / 3.0;
    assert_rows(
        &heat_rows(&doc),
        &[
            ("0-2", [0.1 * third, 0.2 * third, 0.3 * third, 0.0]),
            ("3-5", [0.5 * third, 0.6 * third, 0.0, 0.4 * third]),
            ("6-8", [0.9 * third, 0.0, 0.7 * third, 0.8 * third]),
            ("9", [0.0, 1.0, 0.0, 0.0]),
        ],
    );

    // By default (up to 4096 rows) a row per rank.
    let (doc, _, _) = report(&files, &["--bins", "4"]);
    assert_eq!(doc["heatmap"]["ranks_per_row"], 1);
    let rows = heat_rows(&doc);
    assert_eq!(rows.len(), 10);
    for (r, (label, util)) in rows.iter().enumerate() {
        assert_eq!(label, &r.to_string());
        let mut want = [0.0; 4];
        want[r % 4] = (r + 1) as f64 / 10.0;
        assert_rows(&[(label.clone(), util.clone())], &[(label, want)]);
    }
}

#[test]
fn absurd_bins_and_heat_rows_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = busy_rank_file(dir.path(), 0);
    for (option, value, bound) in [
        ("--bins", "100000", "1..=4096"),
        ("--bins", "0", "1..=4096"),
        ("--heat-rows", "5000", "1..=4096"),
        ("--heat-rows", "0", "1..=4096"),
    ] {
        let out = run(&[file.as_os_str(), option.as_ref(), value.as_ref()]);
        assert_eq!(out.status.code(), Some(2), "{option} {value}");
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.lines().next().unwrap(),
            format!("error: invalid value '{value}' for '{option} <N>': {value} is not in {bound}")
        );
    }
}

/// Runs tracestat with at most `files` open file descriptors (stdin,
/// stdout and stderr included).
fn run_with_open_files(files: u32, args: &[&OsStr]) -> std::process::Output {
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {files} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_tracestat"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `unitrace-gen --seed 1 trace DIR --ranks N --events 40`: the smallest
/// ranks of the generator (one step of one layer, about 8 KB each), with
/// collectives that line up.
fn generate_ranks(dir: &Path, ranks: usize) {
    unitrace_gen::cli::run_args(&[
        "--seed",
        "1",
        "trace",
        dir.to_str().unwrap(),
        "--ranks",
        &ranks.to_string(),
        "--events",
        "40",
        "-q",
    ])
    .unwrap();
}

/// Ranks of the test below: 8192 by default (two ranks per heatmap row,
/// about 10 s here); `TRACESTAT_MANY_RANKS=65536` runs it at the scale of
/// benches/ranks.sh (docs/tracestat.md#many-ranks).
fn many_ranks() -> usize {
    std::env::var("TRACESTAT_MANY_RANKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8192)
}

#[test]
fn many_ranks_give_one_report_from_one_run_partials_and_combines_of_combines() {
    let n = many_ranks();
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("traces");
    generate_ranks(&traces, n);
    let out = |name: &str| dir.path().join(name);
    let os = |p: &Path| p.as_os_str().to_owned();
    // Every run with at most 256 open files, far fewer than the inputs:
    // each worker reads one file at a time, partials are read one by one.
    let one = out("one.json");
    let console = run_with_open_files(
        256,
        &[traces.as_os_str(), "--json".as_ref(), one.as_os_str()],
    );
    // 16 partials of consecutive rank blocks, over the same file paths.
    let block = n.div_ceil(16);
    let mut partials = Vec::new();
    for i in 0..16 {
        let p = out(&format!("part.{i}.json"));
        let ranks = format!("{}-{}", i * block, ((i + 1) * block).min(n) - 1);
        run_with_open_files(
            256,
            &[
                traces.as_os_str(),
                "--ranks".as_ref(),
                ranks.as_ref(),
                "--partial".as_ref(),
                p.as_os_str(),
            ],
        );
        partials.push(p);
    }
    let combine = |inputs: &[PathBuf], output: &[&str], to: &Path| {
        let mut args = vec![OsStr::new("--combine").to_owned(), "-q".into()];
        args.extend(output.iter().map(|o| OsStr::new(o).to_owned()));
        args.push(os(to));
        args.extend(inputs.iter().map(|p| os(p)));
        let args: Vec<&OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        run_with_open_files(256, &args);
    };
    let combined = out("combined.json");
    combine(&partials, &["--json"], &combined);
    // A combine of combines: 4 partials of 4 partials each, then one
    // combine of those.
    let mut middles = Vec::new();
    for (j, four) in partials.chunks(4).enumerate() {
        let m = out(&format!("middle.{j}.json"));
        combine(four, &["--partial"], &m);
        middles.push(m);
    }
    let twice = out("twice.json");
    combine(&middles, &["--json"], &twice);
    let one_bytes = std::fs::read(&one).unwrap();
    assert!(
        std::fs::read(&combined).unwrap() == one_bytes,
        "partials + combine differ from one run"
    );
    assert!(
        std::fs::read(&twice).unwrap() == one_bytes,
        "a combine of combines differs from one run"
    );

    let doc: serde_json::Value = serde_json::from_slice(&one_bytes).unwrap();
    assert_eq!(doc["ranks"], n);
    // The heatmap: at most 4096 rows of consecutive ranks, each the mean
    // of its ranks; the straggler (rank n/2, which arrives last) keeps a
    // row of its own.
    let h = &doc["heatmap"];
    let per = n.div_ceil(4096);
    assert_eq!(h["ranks_per_row"], per);
    let rows = heat_rows(&doc);
    assert_eq!(rows.len(), n.div_ceil(per));
    let label = |first: usize| match per {
        1 => first.to_string(),
        _ => format!("{first}-{}", (first + per).min(n) - 1),
    };
    assert_eq!(rows[0].0, label(0));
    assert_eq!(rows.last().unwrap().0, label((rows.len() - 1) * per));
    let straggler = doc["straggler"]["rank"].as_str().unwrap().to_string();
    if per > 1 {
        assert_eq!(h["straggler_row"][0], straggler.as_str());
    }
    // Group means keep busy time: a row's mean x its ranks x the bin width,
    // summed, is every rank's busy time.
    let bin_us = f(&h["bin_us"]);
    let heat_busy: f64 = rows
        .iter()
        .enumerate()
        .map(|(i, (_, util))| util.iter().sum::<f64>() * bin_us * per.min(n - i * per) as f64)
        .sum();
    let busy: f64 = doc["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["device"] == "all")
        .map(|b| f(&b["busy_us"]))
        .sum();
    near(heat_busy, busy, 1e-6, "busy time in the heatmap");
    // The console stays a few hundred lines, its heatmap 17.
    let stdout = String::from_utf8(console.stdout).unwrap();
    assert!(
        stdout.lines().count() < 520,
        "{} lines",
        stdout.lines().count()
    );
    assert!(stdout.contains(&format!("\nPer-rank tables show 32 of {n} ranks ")));
    let heat: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("(a column = "))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(heat.len(), 17, "{stdout}");
    assert!(heat[0]
        .trim_start()
        .starts_with(&format!("rank {straggler} (straggler) |")));
    assert!(heat[1]
        .trim_start()
        .starts_with(&format!("ranks 0-{} |", n / 16 - 1)));
}

#[test]
fn combine_reads_more_partials_than_files_may_be_open() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..4).map(|r| busy_rank_file(dir.path(), r)).collect();
    let partial = dir.path().join("p.json");
    let mut args: Vec<&OsStr> = files.iter().map(|p| p.as_os_str()).collect();
    args.extend([OsStr::new("--partial"), partial.as_os_str()]);
    assert!(run(&args).status.success());
    // 300 partials (each rank then 300 times: a warning each, all kept)
    // under a limit of 64 open files.
    let copies: Vec<PathBuf> = (0..300)
        .map(|i| {
            let p = dir.path().join(format!("p.{i}.json"));
            std::fs::copy(&partial, &p).unwrap();
            p
        })
        .collect();
    let json = dir.path().join("r.json");
    let mut args: Vec<&OsStr> = vec![
        "--combine".as_ref(),
        "-q".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ];
    args.extend(copies.iter().map(|p| p.as_os_str()));
    run_with_open_files(64, &args);
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["ranks"], 1200);
}

#[test]
fn a_partial_grows_with_ranks_and_tables_not_with_events() {
    // Two ranks of two steps, 400 and 100,000 events per rank: the same
    // kernels, ranges and collectives, 250 times the events.
    let dir = tempfile::tempdir().unwrap();
    let mut sizes = Vec::new();
    for events in ["400", "100000"] {
        let traces = dir.path().join(events);
        unitrace_gen::cli::run_args(&[
            "trace",
            traces.to_str().unwrap(),
            "--ranks",
            "2",
            "--steps",
            "2",
            "--events",
            events,
            "-q",
        ])
        .unwrap();
        let partial = dir.path().join(format!("{events}.partial.json"));
        let out = run(&[
            traces.as_os_str(),
            "--partial".as_ref(),
            partial.as_os_str(),
        ]);
        assert!(out.status.success());
        let trace_bytes: u64 = std::fs::read_dir(&traces)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        sizes.push((trace_bytes, std::fs::metadata(&partial).unwrap().len()));
    }
    let (small, large) = (sizes[0], sizes[1]);
    assert!(large.0 > 200 * small.0, "{sizes:?}");
    // What grows is bounded per table: the duration sketches' 1% buckets
    // (more distinct durations) and the fine heatmap bins (at most 1024).
    assert!(large.1 < 4 * small.1, "{sizes:?}");
}
