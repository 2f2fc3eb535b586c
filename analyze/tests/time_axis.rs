//! `--x time` (docs/analyze.md#time-axis): metric and
//! throughput charts over the sample's time in µs since the instance's
//! first sample, from `QueryBeginTime[ns]`; the default axis (`--x
//! sample`) unchanged byte for byte; a file without timestamps refused in
//! one line; accepted in option files (`analyze -f`, `uniview -f`). And
//! every page, with either axis, names its instance (ordinal and
//! GlobalInstanceId), also for query-mode files.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::stderr;
use crate::server_common::{get, link, Server};

const K_MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";

fn charts_testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/charts")
        .join(name)
}

fn server_testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/server")
        .join(name)
}

fn analyze(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_analyze"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// The texts of each page of an SVG file written by `-o x.svg` (one
/// nested `<svg>` per page), XML entities of `&`, `<`, `>` undone.
fn svg_pages(svg: &str) -> Vec<Vec<String>> {
    svg.split("<svg")
        .skip(2)
        .map(|page| {
            page.split("<text")
                .skip(1)
                .filter_map(|t| {
                    let body = &t[t.find('>')? + 1..];
                    let text = &body[..body.find("</text>")?];
                    Some(
                        text.replace("&lt;", "<")
                            .replace("&gt;", ">")
                            .replace("&amp;", "&"),
                    )
                })
                .collect()
        })
        .collect()
}

/// Fields of the CSV data rows of a test file (sampling files separate
/// fields with `", "`), by header name.
struct Rows {
    columns: HashMap<String, usize>,
    rows: Vec<Vec<String>>,
}

fn rows(text: &str) -> Rows {
    let split = |line: &str| -> Vec<String> {
        // Kernel names hold commas; they are the first, quoted field.
        let (kernel, rest) = match line.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted.find('"').unwrap();
                (quoted[..end].to_string(), &quoted[end + 1..])
            }
            None => {
                let end = line.find(',').unwrap();
                (line[..end].to_string(), &line[end..])
            }
        };
        std::iter::once(kernel)
            .chain(
                rest.trim_start_matches(',')
                    .split(',')
                    .map(|f| f.trim().to_string()),
            )
            .collect()
    };
    let header = text.lines().find(|l| l.starts_with("Kernel,")).unwrap();
    let columns = header
        .split(',')
        .enumerate()
        .map(|(i, c)| (c.trim().to_string(), i))
        .collect();
    let rows = text
        .lines()
        .filter(|l| l.starts_with('"'))
        .map(split)
        .collect();
    Rows { columns, rows }
}

#[test]
fn time_charts_show_microseconds_since_the_instances_first_sample() {
    let dir = tempfile::tempdir().unwrap();
    let input = charts_testdata("sampling.csv");
    let out = analyze(
        dir.path(),
        &[
            input.to_str().unwrap(),
            "-i",
            "0",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "P",
            "-b",
            "GPU_MEMORY_BYTE_READ[bytes]",
            "--x",
            "time",
            "-o",
            "t.svg",
            "--data",
            "t.csv",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    // The expected points from the input: per instance (a run of rows of
    // one GlobalInstanceId), (QueryBeginTime - first) / 1000 and the value.
    let text = std::fs::read_to_string(&input).unwrap();
    let input_rows = rows(&text);
    let time = input_rows.columns["QueryBeginTime[ns]"];
    let active = input_rows.columns["XVE_ACTIVE[%]"];
    let id = input_rows.columns["GlobalInstanceId"];
    let mut expected = Vec::new();
    let mut origin: Option<(String, f64)> = None;
    let mut position = 0;
    for row in &input_rows.rows {
        let t: f64 = row[time].parse().unwrap();
        if origin.as_ref().map(|(i, _)| i) != Some(&row[id]) {
            origin = Some((row[id].clone(), t));
            position = 0;
        }
        let t0 = origin.as_ref().unwrap().1;
        expected.push((
            row[0].clone(),
            position.to_string(),
            (t - t0) / 1000.0,
            row[active].clone(),
        ));
        position += 1;
    }
    let data = std::fs::read_to_string(dir.path().join("t.csv")).unwrap();
    let mut lines = data.lines();
    assert_eq!(
        lines.next(),
        Some("kernel,instance,sample,time_us,metric,value")
    );
    let drawn: Vec<(String, String, f64, String)> = lines
        .filter(|l| l.contains(",XVE_ACTIVE[%],"))
        .map(|l| {
            let f: Vec<&str> = l.rsplitn(5, ',').collect();
            // value, metric, time_us, sample, "kernel,instance"
            let kernel = f[4].rsplit_once(',').unwrap().0.trim_matches('"');
            (
                kernel.to_string(),
                f[3].to_string(),
                f[2].parse().unwrap(),
                f[0].to_string(),
            )
        })
        .collect();
    assert_eq!(drawn.len(), expected.len());
    for (d, e) in drawn.iter().zip(&expected) {
        assert_eq!((&d.0, &d.1), (&e.0, &e.1));
        assert!((d.2 - e.2).abs() < 1e-9, "{d:?} vs {e:?}");
        assert_eq!(d.3.parse::<f64>().unwrap(), e.3.parse::<f64>().unwrap());
    }
    assert!(expected.iter().any(|e| e.2 > 100.0), "a real time axis");
    // Every page: the time label and the instance in its title.
    let svg = std::fs::read_to_string(dir.path().join("t.svg")).unwrap();
    let pages = svg_pages(&svg);
    assert_eq!(pages.len(), 8, "two pages per instance, four instances");
    for page in &pages {
        assert!(page.iter().any(|t| t == "Time (µs)"), "{page:?}");
        assert!(
            page.iter()
                .any(|t| t.starts_with("instance ") && t.contains(", GlobalInstanceId ")),
            "{page:?}"
        );
    }
}

#[test]
fn the_default_axis_is_unchanged_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let input = charts_testdata("sampling.csv");
    let mut outputs = Vec::new();
    for axis in [None, Some("sample")] {
        let mut args = vec![
            input.to_str().unwrap(),
            "-i",
            "0",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "P",
            "-o",
            "d.pdf",
            "--data",
            "d.csv",
        ];
        if let Some(axis) = axis {
            args.extend_from_slice(&["--x", axis]);
        }
        let out = analyze(dir.path(), &args);
        assert!(out.status.success(), "{}", stderr(&out));
        outputs.push((
            std::fs::read(dir.path().join("d.pdf")).unwrap(),
            std::fs::read_to_string(dir.path().join("d.csv")).unwrap(),
        ));
    }
    assert!(outputs[0] == outputs[1], "--x sample is the default");
    assert!(outputs[0]
        .1
        .starts_with("kernel,instance,sample,metric,value\n"));
}

#[test]
fn an_explicit_x_label_wins_over_the_time_label() {
    let dir = tempfile::tempdir().unwrap();
    let input = charts_testdata("sampling.csv");
    let out = analyze(
        dir.path(),
        &[
            input.to_str().unwrap(),
            "-k",
            K_MAIN,
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "P",
            "--x",
            "time",
            "-x",
            "Since launch",
            "-o",
            "x.svg",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let pages = svg_pages(&std::fs::read_to_string(dir.path().join("x.svg")).unwrap());
    assert_eq!(pages.len(), 1);
    assert!(
        pages[0].iter().any(|t| t == "Since launch"),
        "{:?}",
        pages[0]
    );
    assert!(!pages[0].iter().any(|t| t == "Time (µs)"));
}

#[test]
fn a_file_without_timestamps_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("old.csv"),
        "\n=== Device #0 Metrics ===\n\nKernel, GlobalInstanceId, GpuTime[ns], XVE_ACTIVE[%]\n\
         \"k\", 1, 50000, 3.5\n\"k\", 1, 50000, 4.5\n",
    )
    .unwrap();
    let out = analyze(
        dir.path(),
        &[
            "old.csv",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "P",
            "--x",
            "time",
            "-o",
            "o.pdf",
            "--data",
            "o.csv",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "analyze: old.csv: --x time needs a QueryBeginTime[ns] column\n"
    );
    assert!(out.stdout.is_empty());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "no output, no temporary file");
}

#[test]
fn query_mode_pages_name_their_instance_on_either_axis() {
    let dir = tempfile::tempdir().unwrap();
    let input = charts_testdata("query.csv");
    let text = std::fs::read_to_string(&input).unwrap();
    let input_rows = rows(&text);
    let id = input_rows.columns["GlobalInstanceId"];
    // One row per instance: ordinal per kernel, and the row's id.
    let mut seen: HashMap<String, u32> = HashMap::new();
    let expected: Vec<String> = input_rows
        .rows
        .iter()
        .map(|row| {
            let n = seen.entry(row[0].clone()).or_default();
            *n += 1;
            format!("instance {n}, GlobalInstanceId {}", row[id])
        })
        .collect();
    assert!(expected.len() >= 4);
    for axis in ["sample", "time"] {
        let out = analyze(
            dir.path(),
            &[
                input.to_str().unwrap(),
                "-i",
                "0",
                "-m",
                "XVE_ACTIVE[%]",
                "-y",
                "P",
                "--x",
                axis,
                "-o",
                "q.svg",
            ],
        );
        assert!(out.status.success(), "{axis}: {}", stderr(&out));
        let pages = svg_pages(&std::fs::read_to_string(dir.path().join("q.svg")).unwrap());
        let names: Vec<&String> = pages
            .iter()
            .map(|p| p.iter().find(|t| t.starts_with("instance ")).unwrap())
            .collect();
        assert_eq!(names, expected.iter().collect::<Vec<_>>(), "{axis}");
        // One sample per instance: its time is 0 µs.
        if axis == "time" {
            for page in &pages {
                assert!(page.iter().any(|t| t == "Time (µs)"));
            }
        }
    }
}

/// `--x time` in an option file: `analyze -f`, and uniview's `-f`, which
/// reads analyze's options through clap's description of them.
#[test]
fn option_files_accept_the_time_axis() {
    let dir = tempfile::tempdir().unwrap();
    let options = dir.path().join("time.txt");
    std::fs::write(&options, "-m \"XVE_ACTIVE[%]\" -y \"Percent\" --x time\n").unwrap();
    let input = charts_testdata("sampling.csv");
    let out = analyze(
        dir.path(),
        &[
            input.to_str().unwrap(),
            "-k",
            K_MAIN,
            "-f",
            options.to_str().unwrap(),
            "-o",
            "f.svg",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let pages = svg_pages(&std::fs::read_to_string(dir.path().join("f.svg")).unwrap());
    assert!(pages[0].iter().any(|t| t == "Time (µs)"), "{:?}", pages[0]);

    let trace = server_testdata("trace.json");
    let metrics = server_testdata("metrics3.csv");
    let args = [
        "--trace-port",
        "0",
        "--port",
        "0",
        "--no-browser",
        "-t",
        trace.to_str().unwrap(),
        "-m",
        metrics.to_str().unwrap(),
        "-f",
        options.to_str().unwrap(),
    ];
    let mut server = Server::start(env!("CARGO_BIN_EXE_uniview"), &args, |s| {
        s.perfetto_url.is_some() && s.port.is_some()
    });
    let mut err_pipe = server.child.stderr.take().unwrap();
    let page = get(server.port(), &format!("{}?format=html", link(K_MAIN, 7)));
    assert_eq!(page.status, 200, "{}", page.text());
    // `?format=html` is the instance's dashboard page (docs/analyze.md#dashboard),
    // drawn over the sample time whatever the options; the PDF follows them.
    let html = page.text();
    assert!(html.contains("Time since first sample (µs)"), "{html}");
    assert!(html.contains("GlobalInstanceId 7"), "{html}");
    let pdf = get(server.port(), &link(K_MAIN, 7));
    assert_eq!(pdf.header("content-type"), Some("application/pdf"));
    let (code, _) = server.interrupt();
    assert_eq!(code, Some(0));
    let mut err = String::new();
    err_pipe.read_to_string(&mut err).unwrap();
    assert!(!err.contains("QueryBeginTime"), "{err}");
}
