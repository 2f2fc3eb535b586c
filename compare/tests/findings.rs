//! Findings across two runs (docs/compare.md#findings): new and resolved
//! findings of tracestat between a generated run and the same run with a
//! planted problem, the `findings:` gate, the Markdown, JSON and CSV.

use std::path::Path;
use std::process::{Command, Output};

/// The findings' 2-rank run (`unitrace_gen::cli::findings_run`) without
/// a straggler.
fn generate(out: &Path, extra: &[&str]) {
    let mut args = vec!["--straggler", "none"];
    args.extend(extra);
    unitrace_gen::cli::findings_run(out, &args).unwrap();
}

fn compare(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_compare"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn new_and_resolved_findings_are_reported_and_gated() {
    let dir = tempfile::tempdir().unwrap();
    let (clean, planted) = (dir.path().join("clean"), dir.path().join("planted"));
    generate(&clean, &[]);
    generate(&planted, &["--plant", "pageable-copy"]);
    let md = dir.path().join("c.md");
    let json = dir.path().join("c.json");
    let csv = dir.path().join("c.csv");
    let out = compare(&[
        clean.as_os_str(),
        planted.as_os_str(),
        "--fail-if".as_ref(),
        "findings:new>0".as_ref(),
        "--markdown".as_ref(),
        md.as_os_str(),
        "--json".as_ref(),
        json.as_os_str(),
        "--csv".as_ref(),
        csv.as_os_str(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "findings: 1 new (pageable-copy rank all zeCommandListAppendMemoryCopy(M2D)) breaks 'findings:new>0'"
        ),
        "{stderr}"
    );
    assert!(
        stdout.contains("findings: 1 new, 0 resolved, 0 in both"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  new: pageable-copy rank all zeCommandListAppendMemoryCopy(M2D): saves "),
        "{stdout}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("#### findings\n\nfindings: 1 new, 0 resolved, 0 in both\n"),
        "{md}"
    );
    assert!(
        md.contains("- **new** pageable-copy rank all zeCommandListAppendMemoryCopy(M2D): saves"),
        "{md}"
    );
    assert!(md.contains("Gate: :x: 1 threshold(s) exceeded"), "{md}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let new = &doc["findings"]["new"][0];
    assert_eq!(new["rule"], "pageable-copy");
    assert_eq!(new["rank"], "all");
    assert!(new["baseline_savings_us"].is_null());
    assert!(new["candidate_savings_us"].as_f64().unwrap() > 0.0);
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert!(
        csv.lines().any(|l| l.starts_with(
            "findings,pageable-copy rank all zeCommandListAppendMemoryCopy(M2D),,new,savings_us,,"
        )),
        "{csv}"
    );

    // The other way round the finding is resolved: the gate on new ones
    // holds, one on resolved ones (at least one wanted) too.
    let out = compare(&[
        planted.as_os_str(),
        clean.as_os_str(),
        "--fail-if".as_ref(),
        "findings:new>0".as_ref(),
        "--fail-if".as_ref(),
        "findings:resolved:pageable-*<1".as_ref(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("findings: 0 new, 1 resolved, 0 in both"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  resolved: pageable-copy rank all"),
        "{stdout}"
    );

    // The same run twice: nothing new, nothing resolved, one kept.
    let out = compare(&[
        planted.as_os_str(),
        planted.as_os_str(),
        "--fail-if".as_ref(),
        "findings:new>0".as_ref(),
        "--fail-if".as_ref(),
        "findings:total>1".as_ref(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("findings: 0 new, 0 resolved, 1 in both"),
        "{stdout}"
    );
}

#[test]
fn a_findings_gate_on_inputs_without_findings_is_a_warning() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/compare");
    let base = data.join("base.summary.json");
    let cand = data.join("cand.summary.json");
    let out = compare(&[
        base.as_os_str(),
        cand.as_os_str(),
        "--fail-if".as_ref(),
        "findings:new>0".as_ref(),
        "-q".as_ref(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("'findings:new>0': these inputs have no findings"),
        "{stderr}"
    );
}

/// `--html`: the page lists the findings new, resolved and in both with
/// their savings, every text escaped (the planted Kineto recording's
/// `<built-in function sleep>`), offline.
#[test]
fn the_html_page_shows_the_findings_escaped_and_offline() {
    let dir = tempfile::tempdir().unwrap();
    let kineto = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded");
    let page = dir.path().join("p.html");
    let out = compare(&[
        kineto.join("clean").as_os_str(),
        kineto.join("planted").as_os_str(),
        "--html".as_ref(),
        page.as_os_str(),
        "-q".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let at = html.find("<h2>findings</h2>").expect(&html);
    let end = at + html[at..].find("</table>").expect("a findings table");
    let findings = &html[at..end];
    let line = findings
        .split("<p>")
        .nth(1)
        .and_then(|p| p.split("</p>").next())
        .unwrap();
    assert!(
        line.starts_with("findings: ") && line.contains(" new, 0 resolved, 0 in both"),
        "{line}"
    );
    for header in [
        "finding",
        "rule",
        "rank",
        "baseline saves",
        "candidate saves",
        "evidence",
    ] {
        assert!(findings.contains(&format!("<th>{header}</th>")), "{header}");
    }
    // One row per new finding, as the JSON has them, with its savings.
    let json = dir.path().join("c.json");
    let out = compare(&[
        kineto.join("clean").as_os_str(),
        kineto.join("planted").as_os_str(),
        "--json".as_ref(),
        json.as_os_str(),
        "-q".as_ref(),
    ]);
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let new = doc["findings"]["new"].as_array().unwrap();
    assert!(new.len() >= 4, "{new:?}");
    assert_eq!(findings.matches("<td>new</td>").count(), new.len());
    for f in new {
        let rule = f["rule"].as_str().unwrap();
        assert!(findings.contains(&format!("<td>{rule}</td>")), "{rule}");
    }
    // The host-bound finding's evidence names the sleep, escaped.
    assert!(findings.contains("&lt;built-in function sleep&gt;"));
    assert!(!html.contains("<built-in"));
    assert!(!html.contains("<script"));
    assert_eq!(
        html.replace("http://www.w3.org/2000/svg", "")
            .matches("http")
            .count(),
        0
    );
}
