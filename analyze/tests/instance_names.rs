//! Pages that say which instance they show
//! (docs/compatibility.md#analyze-instance-names): every chart page's title
//! names its instance (ordinal and GlobalInstanceId), and a PDF has an
//! outline kernel -> instance whose entries open the instance's first page.

use std::path::Path;
use std::process::Command;

const K_MAIN: &str = "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]";
const K_CONV: &str = "gen_conv[SIMD16 {28; 28; 8} {16; 1; 1}]";

fn sampling() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/charts/sampling.csv");
    p.to_str().unwrap().to_string()
}

/// Draws every instance with two `-m` sets (two pages per instance).
fn draw_all(out: &Path) {
    let status = Command::new(env!("CARGO_BIN_EXE_analyze"))
        .args([&sampling(), "-i", "0", "-m", "XVE_ACTIVE[%]", "-y", "A"])
        .args(["-m", "XVE_STALL[%]", "-y", "S", "-o"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
}

/// The PDF's objects by number (our writer puts one per `N 0 obj`).
fn objects(pdf: &str) -> Vec<(u32, &str)> {
    pdf.split("endobj")
        .filter_map(|chunk| {
            let at = chunk.find(" 0 obj")?;
            let number = chunk[..at]
                .trim()
                .rsplit('\n')
                .next()?
                .trim()
                .parse()
                .ok()?;
            Some((number, &chunk[at..]))
        })
        .collect()
}

/// The value after `key ` up to the end of its line.
fn entry<'a>(object: &'a str, key: &str) -> Option<&'a str> {
    object
        .lines()
        .find_map(|l| l.trim().strip_prefix(key).map(str::trim))
}

/// The 1-based page of object `page_ref` in the page tree.
fn page_number(objects: &[(u32, &str)], page_ref: &str) -> usize {
    let kids = objects
        .iter()
        .find_map(|(_, o)| entry(o, "/Kids"))
        .unwrap()
        .trim_matches(['[', ']']);
    let refs: Vec<&str> = kids
        .split(" R")
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .collect();
    1 + refs.iter().position(|r| *r == page_ref).unwrap()
}

#[test]
fn pdf_outline_leads_from_kernel_to_each_instance_page() {
    let dir = tempfile::tempdir().unwrap();
    let pdf_path = dir.path().join("all.pdf");
    draw_all(&pdf_path);
    let bytes = std::fs::read(&pdf_path).unwrap();
    let pdf = String::from_utf8_lossy(&bytes);
    let objects = objects(&pdf);
    let catalog = objects
        .iter()
        .find(|(_, o)| o.contains("/Type /Catalog"))
        .unwrap()
        .1;
    assert_eq!(entry(catalog, "/PageMode"), Some("/UseOutlines"));
    assert!(entry(catalog, "/Outlines").is_some());
    // (kernel, instance entry, first page): instances in file order, two
    // pages each.
    let expected = [
        (K_MAIN, "instance 1, GlobalInstanceId 3", 1),
        (K_CONV, "instance 1, GlobalInstanceId 7", 3),
        (K_MAIN, "instance 2, GlobalInstanceId 9", 5),
        (K_CONV, "instance 2, GlobalInstanceId 13", 7),
    ];
    let title_of = |number: &str| {
        let n: u32 = number.trim_end_matches(" 0 R").trim().parse().unwrap();
        let o = objects.iter().find(|(m, _)| *m == n).unwrap().1;
        entry(o, "/Title")
            .unwrap()
            .trim_matches(['(', ')'])
            .to_string()
    };
    let mut found = 0;
    for (_, object) in &objects {
        let Some(title) = entry(object, "/Title") else {
            continue;
        };
        let title = title.trim_matches(['(', ')']);
        let Some(&(kernel, _, page)) = expected.iter().find(|e| e.1 == title) else {
            continue;
        };
        // Under its kernel, pointing at the instance's first page.
        assert_eq!(
            title_of(entry(object, "/Parent").unwrap()),
            kernel,
            "{title}"
        );
        let dest = entry(object, "/Dest").unwrap();
        let page_ref = dest
            .trim_start_matches('[')
            .split(" R")
            .next()
            .unwrap()
            .trim();
        assert_eq!(page_number(&objects, page_ref), page, "{title}");
        // ... whose title names the instance.
        let text = Command::new("pdftotext")
            .args(["-f", &page.to_string(), "-l", &page.to_string()])
            .arg(&pdf_path)
            .arg("-")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(text.contains(title), "page {page}: {text}");
        found += 1;
    }
    assert_eq!(found, expected.len());
    // One kernel entry each.
    assert_eq!(pdf.matches(&format!("/Title ({K_MAIN})")).count(), 1);
    assert_eq!(pdf.matches(&format!("/Title ({K_CONV})")).count(), 1);
}

#[test]
fn every_svg_page_names_its_instance() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("all.svg");
    draw_all(&svg);
    let text = std::fs::read_to_string(&svg).unwrap();
    let pages: Vec<&str> = text.split("<svg x=\"0\"").skip(1).collect();
    assert_eq!(pages.len(), 8);
    let ids = [3, 3, 7, 7, 9, 9, 13, 13];
    for (i, page) in pages.iter().enumerate() {
        let ordinal = 1 + i / 4;
        let wanted = format!(">instance {ordinal}, GlobalInstanceId {}</text>", ids[i]);
        assert!(page.contains(&wanted), "page {}: {wanted}", i + 1);
    }
}
