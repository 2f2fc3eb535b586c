//! Rules of the repository itself that no compiler checks
//! (ARCHITECTURE.md#tests, docs/benchmarks.md):
//!
//! * comments, scripts and docs cite the project's own docs
//!   (`docs/<page>.md#<anchor>`), never the number of an issue of a tracker that
//!   is not part of the repository;
//! * docs name no machine's own paths (a home or work folder of whoever
//!   measured something): a reader cannot follow them;
//! * docs/benchmarks.md holds the current figures only and stays under
//!   40 KB (the dated journal is docs/benchmarks-history.md);
//! * every crate of the workspace has the one-test-binary layout of
//!   tests/README.md ("Layout").

use std::fs;
use std::path::{Path, PathBuf};

use regex::Regex;

/// Files still being rewritten elsewhere that cite an issue number; each must
/// still have such a citation (so this list only shrinks): remove its entry
/// once the file is clean.
const PENDING_ISSUE_CITATIONS: &[&str] = &[];

/// docs/benchmarks.md's size limit, in bytes.
const BENCHMARKS_MAX_BYTES: u64 = 40_000;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the system-tests crate lives in the repository root")
        .to_path_buf()
}

/// Every file under `dir` except build outputs, hidden folders other than
/// `.ci`, and the folders of test data (whose READMEs are kept: they are
/// docs); paths relative to `root`, `/`-separated, sorted.
fn files(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("readable folder").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let rel = path
                .strip_prefix(root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            if path.is_dir() {
                let skipped = name == "target"
                    || (name.starts_with('.') && name != ".ci")
                    || rel == "fuzz/corpus"
                    || rel == "fuzz/artifacts";
                if !skipped {
                    walk(root, &path, out);
                }
            } else {
                let data = rel.starts_with("testdata/")
                    || rel.starts_with("tests/bad_inputs/")
                    || rel.starts_with("fuzz/regressions/");
                if !data || name.ends_with(".md") {
                    out.push(rel);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// Source, script, manifest and documentation files: where a comment or a
/// sentence could cite something.
fn is_text_to_check(rel: &str) -> bool {
    let ext = rel.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    matches!(ext, "rs" | "sh" | "py" | "toml" | "md" | "yml" | "yaml")
        || rel.starts_with(".ci/")
        || (rel.starts_with("scripts/") && !rel.contains('.'))
}

/// The spellings of a tracker's number: the word with a number (`#` and a
/// hyphen allowed between), a number in parentheses after `#`, a pull
/// request's number (built from parts, and tested in
/// `the_rules_recognise_what_they_forbid` with strings built from parts, so
/// that this file does not cite one itself).
fn issue_citation() -> Regex {
    let word = ["iss", "ue"].concat();
    Regex::new(&format!(
        r"(?i)\b{word}s?\s*#?\s*[0-9]+|\b{word}-[0-9]+|\(#[0-9]+\)|\b(?:PR|pull request)\s*#[0-9]+"
    ))
    .unwrap()
}

fn lines_matching(re: &Regex, text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| re.is_match(l))
        .map(|(i, l)| (i + 1, l.trim().to_string()))
        .collect()
}

#[test]
fn no_comment_script_or_doc_cites_an_issue_number() {
    let root = repository();
    let re = issue_citation();
    let mut found = Vec::new();
    let mut still_pending = Vec::new();
    for rel in files(&root).iter().filter(|r| is_text_to_check(r)) {
        let Ok(text) = fs::read_to_string(root.join(rel)) else {
            continue; // not UTF-8: no comment of ours
        };
        let hits = lines_matching(&re, &text);
        if PENDING_ISSUE_CITATIONS.contains(&rel.as_str()) {
            if !hits.is_empty() {
                still_pending.push(rel.clone());
            }
            continue;
        }
        found.extend(hits.into_iter().map(|(n, l)| format!("{rel}:{n}: {l}")));
    }
    assert!(
        found.is_empty(),
        "cite the docs (docs/<page>.md#<anchor>) instead of an issue number, or drop the reference:\n{}",
        found.join("\n")
    );
    let cleaned: Vec<&&str> = PENDING_ISSUE_CITATIONS
        .iter()
        .filter(|p| !still_pending.iter().any(|s| s == *p))
        .collect();
    assert!(
        cleaned.is_empty(),
        "no issue citation is left in {cleaned:?}: remove it from PENDING_ISSUE_CITATIONS"
    );
}

/// An absolute path into someone's home or work folder: `/home/...`,
/// `/work/...`, `/root/...`, `/Users/...`, `C:\Users\...`.
fn machine_path() -> Regex {
    Regex::new(r"(?:^|[^\w.~$/-])/(?:home|work|root|Users)/|(?i)\b[a-z]:\\Users\\").unwrap()
}

#[test]
fn no_doc_names_a_machine_path() {
    let root = repository();
    let re = machine_path();
    let mut found = Vec::new();
    for rel in files(&root).iter().filter(|r| r.ends_with(".md")) {
        let text = fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
        found.extend(
            lines_matching(&re, &text)
                .into_iter()
                .map(|(n, l)| format!("{rel}:{n}: {l}")),
        );
    }
    assert!(
        found.is_empty(),
        "docs must not name a machine's own paths (use a placeholder such as DIR or WORK):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_rules_recognise_what_they_forbid() {
    let issue = issue_citation();
    let word = ["iss", "ue"].concat();
    for bad in [
        format!("// found by fuzzing ({word} 10)."),
        format!("//! {word} 17, item 4"),
        format!("{}s 3 and 4", word.to_uppercase()),
        format!("see {word} #4"),
        format!("the {word}-10 system tests"),
        format!("fixed in ({}12)", '#'),
        format!("PR {}7", '#'),
    ] {
        assert!(issue.is_match(&bad), "{bad:?} not recognised");
    }
    for good in [
        "docs/compatibility.md#analyze-quirk-13",
        "=== Device #0 Metrics ===",
        "main::{lambda(auto:1)#4}",
        "the tissue 3 layers",
        "one issue at a time",
    ] {
        assert!(!issue.is_match(good), "{good:?} taken for a citation");
    }
    let path = machine_path();
    for bad in [
        "--work /work/tgt/x",
        "`/home/user/data`",
        "(/root/bench)",
        "C:\\Users\\me",
        "/Users/me/x",
    ] {
        assert!(path.is_match(bad), "{bad:?} not recognised");
    }
    for good in [
        "$HOME/src/pti-gpu",
        "--work DIR",
        "benches/work/x",
        "~/work/x",
        "/tmp/scan",
        "/dev/shm",
    ] {
        assert!(!path.is_match(good), "{good:?} taken for a machine path");
    }
}

#[test]
fn benchmarks_page_stays_under_40_kb() {
    let page = repository().join("docs/benchmarks.md");
    let size = fs::metadata(&page)
        .unwrap_or_else(|e| panic!("{}: {e}", page.display()))
        .len();
    assert!(
        size < BENCHMARKS_MAX_BYTES,
        "docs/benchmarks.md is {size} bytes (limit {BENCHMARKS_MAX_BYTES}): it holds the current \
         figure of each benchmark only; move dated runs to docs/benchmarks-history.md"
    );
}

/// The `members` of the root Cargo.toml (no globs are used there).
fn workspace_members(root: &Path) -> Vec<String> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).expect("root Cargo.toml");
    let list = Regex::new(r"(?ms)^\s*members\s*=\s*\[(.*?)\]").unwrap();
    let quoted = Regex::new(r#""([^"]+)""#).unwrap();
    let members: Vec<String> = list
        .captures(&manifest)
        .map(|c| {
            quoted
                .captures_iter(&c[1])
                .map(|q| q[1].to_string())
                .collect()
        })
        .unwrap_or_default();
    assert!(!members.is_empty(), "no [workspace] members in Cargo.toml");
    members
}

#[test]
fn every_crate_has_one_test_binary_with_the_layout_guard() {
    let root = repository();
    let test_main = Regex::new(r#"(?m)^\[\[test\]\]\s*\nname\s*=\s*"main""#).unwrap();
    let mut problems = Vec::new();
    for member in workspace_members(&root) {
        let dir = root.join(&member);
        let manifest = fs::read_to_string(dir.join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{member}/Cargo.toml: {e}"));
        if !dir.join("tests").is_dir() {
            problems.push(format!("{member}: no tests/ folder"));
            continue;
        }
        if !manifest.lines().any(|l| l.trim() == "autotests = false") {
            problems.push(format!("{member}/Cargo.toml: no `autotests = false`"));
        }
        if !test_main.is_match(&manifest) {
            problems.push(format!("{member}/Cargo.toml: no [[test]] name = \"main\""));
        }
        let main = fs::read_to_string(dir.join("tests/main.rs")).unwrap_or_default();
        if !main.contains("fn every_test_file_is_a_module_of_main()") {
            problems.push(format!(
                "{member}/tests/main.rs: no every_test_file_is_a_module_of_main"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "tests/README.md, \"Layout\": one integration-test binary per crate:\n{}",
        problems.join("\n")
    );
}

/// The anchors a Markdown file defines: its headings as GitHub spells them
/// (lower case, punctuation dropped, blanks as `-`, `-1`, `-2` after
/// repeats) and its `<a id="...">` tags; fenced code is skipped.
fn anchors_of(text: &str) -> Vec<String> {
    let tag = Regex::new(r#"<a id="([^"]+)""#).unwrap();
    let mut out: Vec<String> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    let mut in_code = false;
    for line in text.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        if let Some(heading) = line.strip_prefix('#') {
            let heading = heading.trim_start_matches('#');
            if heading.starts_with(' ') {
                let slug: String = heading
                    .trim()
                    .to_lowercase()
                    .chars()
                    .filter(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' '))
                    .map(|c| if c == ' ' { '-' } else { c })
                    .collect();
                let repeats = seen.entry(slug.clone()).or_insert(0);
                out.push(if *repeats == 0 {
                    slug.clone()
                } else {
                    format!("{slug}-{repeats}")
                });
                *repeats += 1;
            }
        }
        out.extend(tag.captures_iter(line).map(|c| c[1].to_string()));
    }
    out
}

#[test]
fn anchors_are_spelt_as_github_spells_them() {
    let page = "# A b\n## Report validity (`--keep-invalid`, `--strict`)\n## A b\n```\n# not a heading\n```\n#no heading\n<a id=\"mapped-inputs\"></a>\n";
    assert_eq!(
        anchors_of(page),
        [
            "a-b",
            "report-validity---keep-invalid---strict",
            "a-b-1",
            "mapped-inputs"
        ]
    );
}

#[test]
fn every_cited_doc_anchor_exists() {
    let root = repository();
    let cited = Regex::new(r"((?:[\w./-]*/)?[\w-]+\.md)#([\w-]+)").unwrap();
    let local = Regex::new(r"\]\(#([\w-]+)\)").unwrap();
    let mut cache: std::collections::HashMap<PathBuf, Option<Vec<String>>> = Default::default();
    let mut anchors = |path: PathBuf| {
        cache
            .entry(path.clone())
            .or_insert_with(|| fs::read_to_string(&path).ok().map(|t| anchors_of(&t)))
            .clone()
    };
    let mut broken = Vec::new();
    for rel in files(&root).iter().filter(|r| is_text_to_check(r)) {
        let Ok(text) = fs::read_to_string(root.join(rel)) else {
            continue;
        };
        let dir = root
            .join(rel)
            .parent()
            .expect("a file has a folder")
            .to_path_buf();
        for c in cited.captures_iter(&text) {
            let (file, anchor) = (&c[1], &c[2]);
            // Relative to the citing file (Markdown links), else to the root.
            let found = [dir.join(file), root.join(file)]
                .into_iter()
                .find_map(&mut anchors);
            match found {
                None => broken.push(format!("{rel}: {file}#{anchor}: no such file")),
                Some(list) if !list.iter().any(|a| a == anchor) => {
                    broken.push(format!("{rel}: {file}#{anchor}: no such anchor"))
                }
                Some(_) => {}
            }
        }
        if rel.ends_with(".md") {
            let own = anchors(root.join(rel)).unwrap_or_default();
            for c in local.captures_iter(&text) {
                if !own.iter().any(|a| *a == c[1]) {
                    broken.push(format!("{rel}: #{}: no such anchor", &c[1]));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "cited docs anchors that do not exist (add an `<a id=\"...\"></a>` or fix the citation):\n{}",
        broken.join("\n")
    );
}
