//! The HTML page laid out by a real browser (docs/tracestat.md#html-page):
//! headless Chromium (Debian `chromium`, installed by scripts/test.sh; or
//! `$CHROMIUM`) loads the planted four-rank recording's page with a
//! measuring script added, and every table cell must end inside the
//! page's width, numbers must stay on one line and a folded name must be
//! at most 4 lines tall. The page itself has no script; the copy the test
//! loads gets one before `</body>`. Without Chromium the test fails
//! (the layout is what it checks).

use std::path::Path;

use serde_json::Value;

use crate::common::run;

/// Measures the laid-out page and writes `{"problems": [...], ...}` into a
/// `<pre id="layout">` for `--dump-dom` to carry out.
const MEASURE: &str = r#"<script>
const page = document.querySelector("main").getBoundingClientRect();
const problems = [];
const lines = (el) => {
  const r = document.createRange();
  r.selectNodeContents(el);
  return new Set(Array.from(r.getClientRects(), (b) => Math.round(b.top))).size;
};
for (const td of document.querySelectorAll("td")) {
  if (td.getBoundingClientRect().right > page.right + 0.5) {
    problems.push("past the page: " + td.textContent.slice(0, 80));
  }
}
for (const td of document.querySelectorAll("td.num")) {
  if (lines(td) > 1) problems.push("number on several lines: " + td.textContent);
}
let folds = 0;
for (const d of document.querySelectorAll("div.fold")) {
  folds += 1;
  const style = getComputedStyle(d);
  const line = parseFloat(style.lineHeight) || 1.2 * parseFloat(style.fontSize);
  if (d.getBoundingClientRect().height > 4.5 * line) {
    problems.push("folded name over 4 lines: " + d.title.slice(0, 80));
  }
}
const pre = document.createElement("pre");
pre.id = "layout";
pre.textContent = JSON.stringify({
  problems,
  cells: document.querySelectorAll("td").length,
  long: document.querySelectorAll("td.long").length,
  folds,
});
document.body.appendChild(pre);
</script>
"#;

/// The DOM Chromium builds for `page` at 1400 px wide (`--dump-dom`).
fn chromium_dom(page: &Path) -> String {
    let url = format!("file://{}", page.display());
    unitrace_system_tests::chromium_dom(&url, &["--window-size=1400,3000"])
}

/// QA's page: the findings' evidence, the top kernels' names and the
/// critical path's names ran past the 1180 px page (clipped, reachable
/// only by scrolling the table) and long kernel names made rows 5 to 7
/// lines tall.
#[test]
fn the_page_keeps_long_text_inside_its_width_and_numbers_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let planted = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded/planted");
    let html = dir.path().join("p.html");
    let out = run(&[
        planted.as_os_str(),
        "-q".as_ref(),
        "--html".as_ref(),
        html.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("<script"), "the page itself has no script");
    let measured = dir.path().join("measured.html");
    std::fs::write(
        &measured,
        page.replace("</body>", &format!("{MEASURE}</body>")),
    )
    .unwrap();
    let dom = chromium_dom(&measured);
    let at = dom
        .find("<pre id=\"layout\">")
        .expect("the measuring script ran")
        + 17;
    let end = at + dom[at..].find("</pre>").unwrap();
    let text = dom[at..end].replace("&quot;", "\"").replace("&amp;", "&");
    let got: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(got["problems"], serde_json::json!([]), "{got}");
    // The checks saw the cells they are about: the findings' evidence and
    // the names in long columns, the longest kernel names folded.
    assert!(got["cells"].as_u64().unwrap() > 300, "{got}");
    assert!(got["long"].as_u64().unwrap() >= 50, "{got}");
    assert!(got["folds"].as_u64().unwrap() >= 5, "{got}");
}
