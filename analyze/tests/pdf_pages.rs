//! The PDFs `analyze` writes, read back with poppler (`pdftotext`,
//! `pdftoppm`; `scripts/test.sh` installs poppler-utils): every page
//! renders, its text is selectable and searchable, no glyph lies outside
//! the page (long kernel names in titles are wrapped, never cut), and the
//! embedded font is a subset of the glyphs the document uses.

use std::path::{Path, PathBuf};
use std::process::Command;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/charts")
}

/// A poppler tool; its absence fails the test with a hint, as a missing
/// Chromium does for the page tests.
fn poppler(tool: &str) -> Command {
    let found = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()));
    assert!(
        found,
        "{tool} not found on PATH: install the Debian package `poppler-utils` \
         (scripts/test.sh installs it) to run the PDF tests"
    );
    Command::new(tool)
}

fn analyze(cwd: &Path, args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_analyze"))
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("analyze runs");
    assert!(
        out.status.success(),
        "analyze {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A word `pdftotext -bbox` found, with its box in points.
#[derive(Debug)]
struct Word {
    page: usize,
    x_min: f64,
    y_min: f64,
    x_max: f64,
    y_max: f64,
    text: String,
}

fn attr(tag: &str, name: &str) -> f64 {
    let key = format!("{name}=\"");
    let at = tag.find(&key).unwrap_or_else(|| panic!("{name} in {tag}")) + key.len();
    let end = tag[at..].find('"').unwrap() + at;
    tag[at..end].parse().unwrap()
}

/// Pages (width, height) and words of `pdf`.
fn words(pdf: &Path) -> (Vec<(f64, f64)>, Vec<Word>) {
    let out = poppler("pdftotext")
        .arg("-bbox")
        .arg(pdf)
        .arg("-")
        .output()
        .unwrap();
    assert!(out.status.success(), "pdftotext -bbox {}", pdf.display());
    let html = String::from_utf8(out.stdout).unwrap();
    let mut pages = Vec::new();
    let mut words = Vec::new();
    for (i, page) in html.split("<page ").skip(1).enumerate() {
        let head = &page[..page.find('>').unwrap()];
        pages.push((attr(head, "width"), attr(head, "height")));
        for word in page.split("<word ").skip(1) {
            let end = word.find('>').unwrap();
            let tag = &word[..end];
            let text = &word[end + 1..word.find("</word>").unwrap()];
            words.push(Word {
                page: i + 1,
                x_min: attr(tag, "xMin"),
                y_min: attr(tag, "yMin"),
                x_max: attr(tag, "xMax"),
                y_max: attr(tag, "yMax"),
                text: text
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&apos;", "'")
                    .replace("&amp;", "&"),
            });
        }
    }
    (pages, words)
}

fn assert_all_on_the_page(name: &str, pdf: &Path) -> Vec<Word> {
    let (pages, words) = words(pdf);
    assert!(!pages.is_empty(), "{name}: no pages");
    let off: Vec<&Word> = words
        .iter()
        .filter(|w| {
            let (width, height) = pages[w.page - 1];
            w.x_min < 0.0 || w.y_min < 0.0 || w.x_max > width || w.y_max > height
        })
        .collect();
    assert!(off.is_empty(), "{name}: glyphs outside the page: {off:?}");
    words
}

/// The golden cases of testdata/charts/cases.txt: (name, input, options).
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
fn golden_case_pdfs_keep_every_glyph_on_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (name, input, opts) in cases() {
        let pdf = dir.path().join(format!("{name}.pdf"));
        let input = testdata().join(input);
        let mut args = vec![input.to_str().unwrap()];
        args.extend(opts.iter().map(String::as_str));
        args.extend(["-o", pdf.to_str().unwrap()]);
        analyze(dir.path(), &args);
        assert_all_on_the_page(&name, &pdf);
        checked += 1;
    }
    assert_eq!(checked, 7);
}

/// docs/compatibility.md#analyze-pages: the default generated file's long kernel names lost
/// characters past the right edge (`{1024; 1; 1}` became `{102`) because
/// titles were wrapped at the page width but centred over the axes.
#[test]
fn long_kernel_names_are_wrapped_not_cut() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("long.pdf");
    let input = testdata().join("long_names.csv");
    analyze(
        dir.path(),
        &[
            input.to_str().unwrap(),
            "-f",
            "pvc/ComputeBasic.txt",
            "-o",
            pdf.to_str().unwrap(),
        ],
    );
    let words = assert_all_on_the_page("long_names", &pdf);
    let text: String = words
        .iter()
        .map(|w| w.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    // Every kernel name is there whole (pdftotext splits words at spaces;
    // a title line break falls at a space or between characters).
    let list = Command::new(env!("CARGO_BIN_EXE_analyze"))
        .args([input.to_str().unwrap(), "-l"])
        .output()
        .unwrap();
    let list = String::from_utf8(list.stdout).unwrap();
    // `-l` lists `"NAME", COUNT` under `Kernel, Number of Instances`.
    let kernels: Vec<&str> = list
        .lines()
        .skip_while(|l| !l.trim().starts_with("Kernel,"))
        .skip(1)
        .filter_map(|l| Some(&l[l.find('"')? + 1..l.rfind('"')?]))
        .collect();
    assert!(kernels.len() >= 8, "kernels of long_names.csv: {list}");
    let squeezed: String = text.split_whitespace().collect();
    for kernel in &kernels {
        let kernel: String = kernel.split_whitespace().collect();
        assert!(
            squeezed.contains(&kernel),
            "{kernel} is not whole in the PDF text"
        );
    }
    assert!(text.contains("{1024;"), "the shape that used to be cut");
}

/// The PDF renders (pdftoppm draws its pages) and embeds a font subset:
/// a one-page chart is a few dozen kilobytes, not the 380 KB of the whole
/// deflated DejaVu Sans.
#[test]
fn pdf_renders_and_embeds_a_font_subset() {
    let dir = tempfile::tempdir().unwrap();
    let pdf = dir.path().join("one.pdf");
    let input = testdata().join("sampling.csv");
    analyze(
        dir.path(),
        &[
            input.to_str().unwrap(),
            "-k",
            "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]",
            "-i",
            "1",
            "-m",
            "XVE_STALL[%]",
            "-y",
            "Stall (%)",
            "-o",
            pdf.to_str().unwrap(),
        ],
    );
    let size = std::fs::metadata(&pdf).unwrap().len();
    assert!(
        size < 40_000,
        "one-page PDF of {size} bytes: font not subset?"
    );
    let bytes = std::fs::read(&pdf).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains("+DejaVuSans"),
        "subset font name (XXXXXX+DejaVuSans)"
    );

    let png = dir.path().join("page");
    let out = poppler("pdftoppm")
        .args(["-png", "-r", "30", "-f", "1", "-l", "1"])
        .arg(&pdf)
        .arg(&png)
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "pdftoppm: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rendered = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().ends_with(".png"))
        .expect("a PNG of page 1");
    assert!(rendered.metadata().unwrap().len() > 1000);

    let (_, words) = words(&pdf);
    let all: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    assert!(all.contains(&"XVE_STALL[%]"), "searchable legend: {all:?}");
    assert!(all.contains(&"{4096;"), "searchable title: {all:?}");
}
