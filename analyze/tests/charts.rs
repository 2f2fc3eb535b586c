//! Chart modes of `analyze` against the original analyzeperfmetrics.py
//! (golden outputs in testdata/charts, see its README), the quirks of
//! docs/compatibility.md#analyze we fix, and bad inputs
//! (docs/compatibility.md#analyze-input-checks).

use crate::common::{stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_analyze")
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/charts")
}

const K_MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";
const K_CONV: &str = "gen_conv[SIMD16 {28; 28; 8} {16; 1; 1}]";

/// Runs analyze with `args` in `cwd` (a folder without `pvc/`, so preset
/// names resolve to the built-in presets).
fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(bin())
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("analyze runs")
}

/// Number of pages of one of our PDFs (the page tree's /Count).
fn pdf_page_count(path: &Path) -> usize {
    let bytes = std::fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let at = text.find("/Type /Pages").expect("page tree");
    let rest = &text[at..];
    let count = rest.find("/Count ").expect("/Count");
    rest[count + 7..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// Text of every page of one of our SVGs: the contents of its `<text>`
/// elements, one per line.
fn svg_pages(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    svg.split("<svg x=\"0\"").skip(1).map(svg_text).collect()
}

/// The `<text>` contents of one page, one per line.
fn svg_text(part: &str) -> String {
    let mut page = String::new();
    for t in part.split("<text ").skip(1) {
        let start = t.find('>').unwrap() + 1;
        let end = t.find("</text>").unwrap();
        page.push_str(&unescape(&t[start..end]));
        page.push('\n');
    }
    page
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// The words of a page except numbers (tick labels, `1e9` offsets): what
/// titles, axis labels and legends say, independent of line wrapping and
/// text order.
fn words(page: &str) -> Vec<String> {
    let mut w: Vec<String> = page
        .split_whitespace()
        .filter(|t| t.replace('\u{2212}', "-").parse::<f64>().is_err())
        .map(str::to_string)
        .collect();
    w.sort();
    w
}

/// `instance N` or `instance N, GlobalInstanceId M`: the title line that
/// names a page's instance.
fn is_instance_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("instance ") else {
        return false;
    };
    let (ordinal, id) = match rest.split_once(", GlobalInstanceId ") {
        Some((n, id)) => (n, Some(id)),
        None => (rest, None),
    };
    ordinal.parse::<u32>().is_ok() && id.is_none_or(|id| id.parse::<u64>().is_ok())
}

fn golden_pages(name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(testdata().join(format!("{name}.orig.txt"))).unwrap();
    let mut pages: Vec<String> = text.split('\u{c}').map(str::to_string).collect();
    if pages.last().is_some_and(|p| p.trim().is_empty()) {
        pages.pop();
    }
    pages
}

/// The cases of testdata/charts/cases.txt: (name, input, options).
fn cases() -> Vec<(String, String, Vec<String>)> {
    let text = std::fs::read_to_string(testdata().join("cases.txt")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let words = analyze::option_file::shell_split(l).unwrap();
            (words[0].clone(), words[1].clone(), words[2..].to_vec())
        })
        .collect()
}

#[test]
fn golden_metric_charts_match_the_original() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (name, input, opts) in cases() {
        if name.starts_with("stall") {
            continue; // stall_charts_match_the_original
        }
        let input = testdata().join(&input);
        let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
        let golden = golden_pages(&name);

        // PDF: page count and messages.
        let pdf = dir.path().join(format!("{name}.pdf"));
        let mut args = vec![input.to_str().unwrap()];
        args.extend(&opts);
        args.extend(["-o", pdf.to_str().unwrap()]);
        let out = run_in(dir.path(), &args);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(pdf_page_count(&pdf), golden.len(), "{name}: pages");
        // Our messages where the original's are wrong (`.fixed.`, rewritten
        // under BLESS=1), else the original's.
        let fixed = testdata().join(format!("{name}.fixed.stdout"));
        let expected = if fixed.exists() {
            unitrace_system_tests::expected::text(&fixed, &stdout(&out))
        } else {
            std::fs::read_to_string(testdata().join(format!("{name}.orig.stdout"))).unwrap()
        };
        assert_eq!(stdout(&out), expected, "{name}: messages");

        // SVG (same layout as the PDF, plain text): words of every page.
        let svg = dir.path().join(format!("{name}.svg"));
        let mut args = vec![input.to_str().unwrap()];
        args.extend(&opts);
        args.extend(["-o", svg.to_str().unwrap()]);
        let out = run_in(dir.path(), &args);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let ours = svg_pages(&svg);
        assert_eq!(ours.len(), golden.len(), "{name}: svg pages");
        for (i, (o, g)) in ours.iter().zip(&golden).enumerate() {
            // Our titles name the instance on a line of their own
            // (docs/compatibility.md#analyze-instance-names); the rest is
            // the original's.
            let (named, rest): (Vec<&str>, Vec<&str>) =
                o.lines().partition(|l| is_instance_line(l));
            assert_eq!(named.len(), 1, "{name}: page {} names its instance", i + 1);
            assert_eq!(words(&rest.join("\n")), words(g), "{name}: page {}", i + 1);
        }
        checked += 1;
    }
    assert_eq!(checked, 6);
}

#[test]
fn stall_charts_match_the_original() {
    use unitrace_core::stall_csv::{CsvReader, StallReader};
    let input = testdata().join("stalls.csv");
    let file = std::fs::File::open(&input).unwrap();
    let mut reader = StallReader::new(CsvReader::new(file, &input));
    let mut ours = Vec::new();
    while let Some(run) = reader.next_run().unwrap() {
        for chart in
            analyze::stall_charts::stall_chart_pages("Stall Sampling", &run.kernel, &run.rows)
        {
            let page = analyze::render::Page::Chart(chart);
            ours.push(svg_text(&analyze::render::svg::page_svg(&page, 0.0, true)));
        }
    }
    let golden = golden_pages("stall_all");
    assert_eq!(ours.len(), golden.len());
    for (i, (o, g)) in ours.iter().zip(&golden).enumerate() {
        assert_eq!(words(o), words(g), "stall page {}", i + 1);
    }
}

fn sampling() -> String {
    testdata()
        .join("sampling.csv")
        .to_str()
        .unwrap()
        .to_string()
}

/// docs/compatibility.md#analyze-quirk-1: with two `-m` sets the original numbers the
/// instances of mode C 2, 4 instead of 1, 2.
#[test]
fn quirk1_mode_c_reports_instance_ordinals() {
    let dir = tempfile::tempdir().unwrap();
    let out_pdf = dir.path().join("c.pdf");
    let out = run_in(
        dir.path(),
        &[
            &sampling(),
            "-k",
            K_MAIN,
            "-i",
            "0",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "A",
            "-m",
            "XVE_STALL[%]",
            "-y",
            "S",
            "-o",
            out_pdf.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("Analyzed instance 1 of kernel {K_MAIN}\n")));
    assert!(text.contains(&format!("Analyzed instance 2 of kernel {K_MAIN}\n")));
    assert!(!text.contains("instance 4"));
}

/// docs/compatibility.md#analyze-quirk-2: mode C crashes when the last instance of K has no blank line
/// after it; we draw it.
#[test]
fn quirk2_mode_c_draws_last_instance_without_blank_line() {
    let dir = tempfile::tempdir().unwrap();
    let input = testdata().join("noblank-end.csv");
    let pdf = dir.path().join("c.pdf");
    let out = run_in(
        dir.path(),
        &[
            input.to_str().unwrap(),
            "-k",
            K_CONV,
            "-i",
            "0",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "A",
            "-o",
            pdf.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("Analyzed instance 2 of kernel {K_CONV}\n")));
    assert_eq!(pdf_page_count(&pdf), 2);
}

/// docs/compatibility.md#analyze-quirk-3: mode A never draws the last instance without a blank line
/// after it, and re-draws an instance with an empty name after a double
/// blank line.
#[test]
fn quirk3_mode_a_draws_every_instance_once() {
    let dir = tempfile::tempdir().unwrap();
    let input = testdata().join("noblank-end.csv");
    let pdf = dir.path().join("a.pdf");
    let out = run_in(
        dir.path(),
        &[
            input.to_str().unwrap(),
            "-i",
            "0",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "A",
            "-o",
            pdf.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.matches("Analyzed kernel ").count(), 4);
    assert!(!text.contains("Analyzed kernel \n"));
    assert_eq!(pdf_page_count(&pdf), 4);
}

/// docs/compatibility.md#analyze-quirk-7: X values are sample ordinals within the instance; the original
/// uses row positions in the section, so its second instance starts at 8.
#[test]
fn quirk7_x_is_sample_ordinal_within_instance() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("d.pdf");
    let data = dir.path().join("d.csv");
    let out = run_in(
        dir.path(),
        &[
            &sampling(),
            "-k",
            K_MAIN,
            "-i",
            "2",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "A",
            "-b",
            "GPU_MEMORY_BYTE_READ[bytes]",
            "-o",
            pdf.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = std::fs::read_to_string(&data).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("kernel,instance,sample,metric,value"));
    let rows: Vec<Vec<String>> = lines
        .map(|l| {
            let mut r = csv_fields(l);
            r.truncate(5);
            r
        })
        .collect();
    // 6 samples of XVE_ACTIVE, then 6 throughput points.
    assert_eq!(rows.len(), 12);
    assert_eq!(rows[0][0], K_MAIN);
    assert_eq!(rows[0][1], "2");
    let samples: Vec<&str> = rows[..6].iter().map(|r| r[2].as_str()).collect();
    assert_eq!(samples, ["0", "1", "2", "3", "4", "5"]);
    assert_eq!(rows[6][3], "GPU_MEMORY_BYTE_READ[bytes]/GpuTime[ns]");
}

/// Minimal CSV field split for the test (quoted fields with doubled quotes).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// docs/compatibility.md#analyze-quirk-15: a banner-less (`--result-dir`) file is device 0; the original
/// says "Device 0 not found".
#[test]
fn quirk15_bannerless_file_is_device_0() {
    let dir = tempfile::tempdir().unwrap();
    let input = testdata().join("nobanner.csv");
    let pdf = dir.path().join("n.pdf");
    let out = run_in(
        dir.path(),
        &[
            input.to_str().unwrap(),
            "-i",
            "0",
            "-f",
            "pvc/ComputeBasic.txt",
            "-o",
            pdf.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(pdf_page_count(&pdf), 7);
}

/// docs/compatibility.md#analyze-quirk-16: "hsa been" in the mode D message.
#[test]
fn quirk16_mode_d_message_spelled_right() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("d.pdf");
    let out = run_in(
        dir.path(),
        &[
            &sampling(),
            "-k",
            K_CONV,
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "A",
            "-o",
            pdf.to_str().unwrap(),
        ],
    );
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("has been successfully generated"));
    assert!(!text.contains("hsa been"));
}

/// docs/compatibility.md#analyze-quirk-17: handled errors exit 0 in the original; ours exit non-zero
/// with the original's message.
#[test]
fn quirk17_handled_errors_exit_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &[&sampling(), "-o", "x.pdf"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), "analyze: -m option is missing\n");
    let out = run_in(dir.path(), &[&sampling(), "-m", "XVE_ACTIVE[%]", "-y", "A"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stderr(&out), "analyze: Error: -o/--output is missing\n");
    assert!(!dir.path().join("x.pdf").exists());
    // The device is checked first (docs/compatibility.md#analyze-input-checks: before telling metric from stall).
    let out = run_in(dir.path(), &[&sampling(), "-d", "2", "-o", "x.pdf"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).ends_with("sampling.csv: Device 2 not found in input file\n"));
}

/// A bad run: one line on stderr, exit != 0, no output file.
fn assert_fails(args: &[&str], message_part: &str) {
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("out.pdf");
    let data = dir.path().join("out.csv");
    let mut all: Vec<&str> = args.to_vec();
    all.extend([
        "-o",
        pdf.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
    ]);
    let out = run_in(dir.path(), &all);
    let err = stderr(&out);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("analyze: "), "{err}");
    assert!(err.contains(message_part), "{err}");
    assert!(!pdf.exists() && !data.exists(), "no output for {args:?}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "no temporary file left: {left:?}");
}

#[test]
fn bad_unknown_metric_name() {
    assert_fails(
        &[&sampling(), "-m", "XVE_ACTIVE[%], NOPE[x]", "-y", "A"],
        "sampling.csv: No metric data for  NOPE[x]",
    );
    assert_fails(
        &[
            &sampling(),
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "A",
            "-b",
            " NOPE[x]",
        ],
        "No throughput data for NOPE[x]",
    );
}

#[test]
fn bad_kernel_not_in_file_lists_closest_names() {
    assert_fails(
        // (`gen_conv` alone is a unique part of a name, and draws it:
        // docs/compatibility.md#analyze-closest-kernel, tests/find_kernel.rs.)
        &[
            &sampling(),
            "-k",
            "gen_cnov",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "A",
        ],
        &format!("No metric data for kernel gen_cnov; closest names: \"{K_CONV}\""),
    );
}

#[test]
fn bad_device_not_in_file() {
    assert_fails(
        &[&sampling(), "-d", "3", "-m", "XVE_ACTIVE[%]", "-y", "A"],
        "Device 3 not found in input file",
    );
}

#[test]
fn bad_instance_beyond_count() {
    assert_fails(
        &[
            &sampling(),
            "-k",
            K_MAIN,
            "-i",
            "3",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "A",
        ],
        &format!("No metric data for instance 3 of kernel {K_MAIN} (it has 2 instances)"),
    );
    // Mode B: no kernel has instance 9.
    assert_fails(
        &[&sampling(), "-i", "9", "-m", "XVE_ACTIVE[%]", "-y", "A"],
        "No performance metric data for kernel or kernel instance",
    );
}

#[test]
fn bad_metric_and_ylabel_counts_differ() {
    assert_fails(
        &[
            &sampling(),
            "-m",
            "XVE_ACTIVE[%]",
            "-m",
            "XVE_STALL[%]",
            "-y",
            "A",
        ],
        "Number of metric sets does not match number of Y labels",
    );
}

#[test]
fn bad_option_file_with_input_path() {
    let dir = tempfile::tempdir().unwrap();
    let opts = dir.path().join("opts.txt");
    std::fs::write(&opts, "-m \"XVE_ACTIVE[%]\" -y A perf.csv\n").unwrap();
    let out = run_in(
        dir.path(),
        &[&sampling(), "-f", opts.to_str().unwrap(), "-o", "o.pdf"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1);
    assert!(
        err.contains("opts.txt: `perf.csv` is not an option"),
        "{err}"
    );
    assert!(!dir.path().join("o.pdf").exists());
}

#[test]
fn bad_unreadable_option_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(
        dir.path(),
        &[&sampling(), "-f", "missing/opts.txt", "-o", "o.pdf"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1);
    assert!(
        err.contains("missing/opts.txt: cannot open option file"),
        "{err}"
    );
    assert!(!dir.path().join("o.pdf").exists());
}

/// A failure after pages were produced (a bad number in a later instance)
/// leaves no output file behind.
#[test]
fn failure_mid_run_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(testdata().join("sampling.csv")).unwrap();
    // Damage a value in the last instance (gen_conv, 2nd).
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let last_row = lines.iter().rposition(|l| l.starts_with('"')).unwrap();
    let cut = lines[last_row].rfind(", ").unwrap();
    lines[last_row] = format!("{}, zz", &lines[last_row][..cut]);
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let pdf = dir.path().join("o.pdf");
    let out = run_in(
        dir.path(),
        &[
            bad.to_str().unwrap(),
            "-i",
            "0",
            "-m",
            "StreamMarker",
            "-y",
            "A",
            "-o",
            pdf.to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains(&format!("bad.csv:{}:", last_row + 1)), "{err}");
    assert!(!pdf.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn pdf_embeds_font_and_original_preset_paths_work() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("p.pdf");
    // The original's own preset path, which does not exist here.
    let out = run_in(
        dir.path(),
        &[
            &sampling(),
            "-k",
            K_MAIN,
            "-f",
            "/opt/pti-gpu/tools/unitrace/scripts/metrics/config/pvc/ComputeBasic.txt",
            "-o",
            pdf.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let bytes = std::fs::read(&pdf).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("/FontFile2"));
    assert!(text.contains("/ToUnicode"));
    assert!(text.contains("/Subtype /CIDFontType2"));
    assert_eq!(pdf_page_count(&pdf), 7);
    // Deterministic: a second run writes the same bytes.
    let again = dir.path().join("again.pdf");
    let out = run_in(
        dir.path(),
        &[
            &sampling(),
            "-k",
            K_MAIN,
            "-f",
            "pvc/ComputeBasic.txt",
            "-o",
            again.to_str().unwrap(),
        ],
    );
    assert!(out.status.success());
    assert!(std::fs::read(&again).unwrap() == bytes);
}

#[test]
fn html_output_is_self_contained() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("c.html");
    let out = run_in(
        dir.path(),
        &[
            &sampling(),
            "-i",
            "0",
            "-f",
            "pvc/ComputeBasic.txt",
            "-o",
            html.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).ends_with("successfully generated in HTML format\n"));
    let text = std::fs::read_to_string(&html).unwrap();
    // The dashboard page (docs/analyze.md#dashboard-file): one section per
    // drawn instance, the data inline, no network resource.
    let drawn = stdout(&out).matches("Analyzed kernel").count();
    assert!(drawn > 0);
    assert_eq!(
        text.matches("<section class=\"card instance\"").count(),
        drawn
    );
    assert!(!text.contains("<script src") && !text.contains("src=\"http"));
    assert!(!text.contains("href=\"http") && !text.contains("fetch('http"));
    assert!(text.ends_with("</html>\n"));
}

/// `-b` divides each metric by the same row's `GpuTime[ns]`, as the
/// original does (docs/compatibility.md#analyze-pages): checked value by value, bit for bit.
#[test]
fn throughput_is_metric_divided_by_gpu_time() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("t.pdf");
    let data = dir.path().join("t.csv");
    let out = run_in(
        dir.path(),
        &[
            &sampling(),
            "-k",
            K_MAIN,
            "-i",
            "1",
            "-m",
            "GpuTime[ns]",
            "-y",
            "ns",
            "-b",
            "L3_BYTE_READ[bytes]",
            "-o",
            pdf.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // The input rows of instance 1 of K_MAIN (the first instance).
    let text = std::fs::read_to_string(testdata().join("sampling.csv")).unwrap();
    let header: Vec<String> = text
        .lines()
        .find(|l| l.starts_with("Kernel,"))
        .unwrap()
        .split(',')
        .map(|c| c.trim().to_string())
        .collect();
    let col = |name: &str| header.iter().position(|c| c == name).unwrap();
    let (gpu, read) = (col("GpuTime[ns]"), col("L3_BYTE_READ[bytes]"));
    let rows: Vec<Vec<String>> = text
        .lines()
        .skip_while(|l| !l.starts_with('"'))
        .take_while(|l| !l.is_empty())
        .map(|l| {
            csv_fields(l)
                .into_iter()
                .map(|f| f.trim().to_string())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 6);
    let written = std::fs::read_to_string(&data).unwrap();
    let throughput: Vec<f64> = written
        .lines()
        .filter(|l| l.contains(",L3_BYTE_READ[bytes]/GpuTime[ns],"))
        .map(|l| csv_fields(l)[4].parse().unwrap())
        .collect();
    assert_eq!(throughput.len(), 6);
    for (row, got) in rows.iter().zip(throughput) {
        let want = row[read].parse::<f64>().unwrap() / row[gpu].parse::<f64>().unwrap();
        assert_eq!(got.to_bits(), want.to_bits());
    }
}

/// Our one-pass grouping in charts.rs numbers instances exactly like the
/// core's `InstanceReader` (used by `analyze -l`): same kernels, ordinals
/// and row counts, on every metric input of testdata/charts.
#[test]
fn instance_grouping_matches_the_core_reader() {
    use unitrace_core::metric_csv::{CsvReader, InstanceReader};
    for name in [
        "sampling.csv",
        "noblank-end.csv",
        "query.csv",
        "nobanner.csv",
    ] {
        let input = testdata().join(name);
        let file = std::fs::File::open(&input).unwrap();
        let mut want: Vec<(String, String, usize)> =
            InstanceReader::new(CsvReader::new(file, &input))
                .map(|i| i.unwrap())
                .map(|i| (i.kernel, i.ordinal.to_string(), i.rows.len()))
                .collect();
        let dir = tempfile::tempdir().unwrap();
        let pdf = dir.path().join("a.pdf");
        let data = dir.path().join("a.csv");
        let out = run_in(
            dir.path(),
            &[
                input.to_str().unwrap(),
                "-i",
                "0",
                "-m",
                "GpuTime[ns]",
                "-y",
                "ns",
                "-o",
                pdf.to_str().unwrap(),
                "--data",
                data.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let mut got: Vec<(String, String, usize)> = Vec::new();
        for line in std::fs::read_to_string(&data).unwrap().lines().skip(1) {
            let f = csv_fields(line);
            match got.last_mut() {
                Some(last) if last.0 == f[0] && last.1 == f[1] => last.2 += 1,
                _ => got.push((f[0].clone(), f[1].clone(), 1)),
            }
        }
        want.sort();
        got.sort();
        assert_eq!(got, want, "{name}");
    }
}

// --- flawed values that are still drawn: one warning per file and kind

/// Writes `text` to `name` in `dir` and runs analyze on it with `args`
/// (then `-o` into `dir` and the file); returns the warning lines.
fn chart_warnings(dir: &Path, name: &str, text: &[u8], args: &[&str]) -> (PathBuf, Vec<String>) {
    let input = dir.join(name);
    std::fs::write(&input, text).unwrap();
    let pdf = dir.join(format!("{name}.pdf"));
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-o", pdf.to_str().unwrap(), input.to_str().unwrap()]);
    let out = run_in(dir, &all);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(pdf.exists());
    let warnings = stderr(&out)
        .lines()
        .filter(|l| l.starts_with("analyze: warning: "))
        .map(str::to_string)
        .collect();
    (input, warnings)
}

const FLAWED_METRICS: &[u8] = b"\n=== Device #0 Metrics ===\n\nKernel, GpuTime[ns], A[%], B[bytes]\n\"k\", 10, 1.5, 100\n\"k\", 0, nan, 100\n\"k\", -5, inf, 1e999\n";

#[test]
fn non_finite_values_and_bad_gpu_time_are_warned_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let (input, warnings) = chart_warnings(
        dir.path(),
        "m.csv",
        FLAWED_METRICS,
        &["-m", "A[%]", "-y", "P", "-b", "B[bytes]"],
    );
    let path = input.display();
    assert_eq!(
        warnings,
        [
            format!(
                "analyze: warning: {path}:6: column `A[%]`: `nan` is not a finite number; \
                 the charts cannot show it (3 such values in drawn instances)"
            ),
            format!(
                "analyze: warning: {path}:6: column `GpuTime[ns]`: `0` is not a positive \
                 duration; the -b throughput divided by it is meaningless (2 such values in \
                 drawn instances)"
            ),
        ]
    );
}

#[test]
fn gpu_time_is_only_checked_for_throughput_and_clean_files_give_no_warning() {
    let dir = tempfile::tempdir().unwrap();
    // Without -b, GpuTime[ns] is not drawn: its 0 and -5 do not matter.
    let (input, warnings) = chart_warnings(
        dir.path(),
        "m.csv",
        FLAWED_METRICS,
        &["-m", "B[bytes]", "-y", "P"],
    );
    assert_eq!(
        warnings,
        [format!(
            "analyze: warning: {}:7: column `B[bytes]`: `1e999` is not a finite number; the \
             charts cannot show it (1 such value in drawn instances)",
            input.display()
        )]
    );
    let (_, warnings) = chart_warnings(
        dir.path(),
        "s.csv",
        &std::fs::read(testdata().join("sampling.csv")).unwrap(),
        &["-m", "GpuTime[ns]", "-y", "ns", "-b", "L3_BYTE_READ[bytes]"],
    );
    assert!(warnings.is_empty(), "{warnings:?}");
}

#[test]
fn non_utf8_kernel_names_are_warned_in_metric_and_stall_charts() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = b"\n=== Device #0 Metrics ===\n\nKernel, GpuTime[ns], A[%]\n\"k\", 10, 1.5\n\n\"gemm_\xe9\", 10, 2.5\n\"\xe8\", 10, 2.5\n";
    let (input, warnings) =
        chart_warnings(dir.path(), "m.csv", metrics, &["-m", "A[%]", "-y", "P"]);
    assert_eq!(
        warnings,
        [format!(
            "analyze: warning: {}:7: kernel name is not valid UTF-8; invalid bytes are shown as U+FFFD",
            input.display()
        )]
    );
    let stalls = b"\n=== Device #0 Metrics ===\n\nKernel, IP[Address], Active[Events], ControlStall[Events], PipeStall[Events], SendStall[Events], DistStall[Events], SbidStall[Events], SyncStall[Events], InstrFetchStall[Events], OtherStall[Events]\n\"k_\xe9\", 0, 2, 0, 0, 0, 2, 0, 0, 0, 0\n";
    let (input, warnings) = chart_warnings(dir.path(), "s.csv", stalls, &["-m", "A[%]", "-y", "P"]);
    assert_eq!(
        warnings,
        [format!(
            "analyze: warning: {}:5: kernel name is not valid UTF-8; invalid bytes are shown as U+FFFD",
            input.display()
        )]
    );
}
