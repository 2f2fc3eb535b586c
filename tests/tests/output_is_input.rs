//! Every tool refuses an output path that names one of its inputs (the
//! same path, another spelling of it, a symbolic or a hard link to it):
//! exit code 1, one line `TOOL: OUTPUT: ... refusing to overwrite it`, the
//! input bytes unchanged, no other file created.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use unitrace_system_tests::{check, repo_root, tool_binary, Expect, Invocation};

/// A scratch folder holding copies of the valid corpus files.
struct Inputs {
    dir: tempfile::TempDir,
}

impl Inputs {
    fn new() -> Inputs {
        let dir = tempfile::tempdir().expect("scratch dir");
        let valid = repo_root().join("tests/bad_inputs/valid");
        for entry in fs::read_dir(&valid).expect("valid corpus folder") {
            let entry = entry.expect("valid corpus entry");
            if entry.path().is_dir() {
                // The shader dump: its files are copied one level down.
                let sub = dir.path().join(entry.file_name());
                fs::create_dir(&sub).expect("folder");
                for f in fs::read_dir(entry.path()).expect("sub folder").flatten() {
                    fs::copy(f.path(), sub.join(f.file_name())).expect("copy");
                }
            } else {
                fs::copy(entry.path(), dir.path().join(entry.file_name())).expect("copy");
            }
        }
        Inputs { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// Ways to name `file` again: itself, with a `./` inside, a symbolic link,
/// a hard link.
fn aliases(file: &Path) -> Vec<PathBuf> {
    let dir = file.parent().expect("file in a folder");
    let name = file.file_name().expect("file name");
    let dotted = dir.join(".").join(name);
    let mut out = vec![file.to_path_buf(), dotted];
    #[cfg(unix)]
    {
        let sym = dir.join(format!("symlink-{}", name.to_string_lossy()));
        if std::os::unix::fs::symlink(file, &sym).is_ok() {
            out.push(sym);
        }
    }
    let hard = dir.join(format!("hardlink-{}", name.to_string_lossy()));
    if fs::hard_link(file, &hard).is_ok() {
        out.push(hard);
    }
    out
}

/// Runs `args` (built for one alias of an input) and checks the refusal.
fn refuses(tool: &str, args: Vec<OsString>, output: &Path, inputs: &Inputs) -> Option<String> {
    let before: Vec<PathBuf> = sorted_listing(inputs.dir.path());
    let inv = Invocation {
        tool: tool.to_string(),
        binary: tool_binary(tool),
        args: args.clone(),
        // The error names the output path given on the command line.
        inputs: vec![output.to_path_buf()],
        other_inputs: vec![inputs.dir.path().to_path_buf()],
        // An empty folder: the check for leftovers is done on the input
        // folder below (outputs would land next to the inputs).
        out_dir: inputs.dir.path().join("no-such-output-folder"),
        cwd: inputs.dir.path().to_path_buf(),
        raw_stdout: None,
    };
    let mut problems = Vec::new();
    match check(&inv, &Expect::Fail(None)) {
        Ok(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if !stderr.contains("refusing to overwrite") {
                problems.push(format!("not a refusal: {stderr}"));
            }
        }
        Err(e) => problems.push(e),
    }
    let after = sorted_listing(inputs.dir.path());
    if before != after {
        problems.push(format!("files changed from {before:?} to {after:?}"));
    }
    if problems.is_empty() {
        None
    } else {
        Some(format!("[{tool} {args:?}] {}", problems.join("; ")))
    }
}

fn sorted_listing(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .expect("listing")
        .flatten()
        .flat_map(|e| {
            if e.path().is_dir() {
                sorted_listing(&e.path())
            } else {
                vec![e.path()]
            }
        })
        .collect();
    v.sort();
    v
}

fn os(items: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    items.iter().map(|i| i.as_ref().to_os_string()).collect()
}

#[test]
fn analyze_list_refuses_its_input_as_output() {
    let mut failures = Vec::new();
    for name in ["metrics_2dev.csv", "stalls_2dev.csv"] {
        let inputs = Inputs::new();
        let input = inputs.path(name);
        for alias in aliases(&input) {
            let args = os(&[&"-l", &"-o", &alias, &input]);
            failures.extend(refuses("analyze", args, &alias, &inputs));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn roofline_refuses_an_input_as_page_or_data_output() {
    let mut failures = Vec::new();
    // Every input in turn as the `--data` output, and as the page (an
    // input named `.html`, so that `--output` keeps the name as given).
    for role in ["compute", "memory", "device"] {
        for as_page in [false, true] {
            let inputs = Inputs::new();
            let mut compute = inputs.path("roofline_compute.csv");
            let mut memory = inputs.path("roofline_memory.csv");
            let mut device = inputs.path("device.json");
            let target = match role {
                "compute" => &mut compute,
                "memory" => &mut memory,
                _ => &mut device,
            };
            if as_page {
                let renamed = target.with_extension("html");
                fs::rename(&*target, &renamed).expect("rename input");
                *target = renamed;
            }
            let victim = target.clone();
            for alias in aliases(&victim) {
                let (page, data) = if as_page {
                    (alias.clone(), inputs.path("data-out.csv"))
                } else {
                    (inputs.path("page-out.html"), alias.clone())
                };
                let args = os(&[
                    &"--compute",
                    &compute,
                    &"--memory",
                    &memory,
                    &"--device",
                    &device,
                    &"--output",
                    &page,
                    &"--data",
                    &data,
                ]);
                failures.extend(refuses("roofline", args, &alias, &inputs));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn mergetrace_refuses_an_input_trace_as_output() {
    let mut failures = Vec::new();
    let inputs = Inputs::new();
    let trace = inputs.path("python.4100.1.json");
    let other = inputs.path("python.4200.2.json");
    fs::copy(&trace, &other).expect("second trace");
    for victim in [&trace, &other] {
        for alias in aliases(victim) {
            let args = os(&[&"-o", &alias, &trace, &other]);
            failures.extend(refuses("mergetrace", args, &alias, &inputs));
            let stats = inputs.path("stats.csv");
            let args = os(&[&"-o", &alias, &"--stats", &stats, &trace, &other]);
            failures.extend(refuses("mergetrace", args, &alias, &inputs));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn tracestat_refuses_an_input_as_report_or_partial_output() {
    let mut failures = Vec::new();
    let inputs = Inputs::new();
    let trace = inputs.path("python.4100.1.json");
    let other = inputs.path("python.4200.2.json");
    fs::copy(&trace, &other).expect("second trace");
    for victim in [&trace, &other] {
        for alias in aliases(victim) {
            for option in ["--json", "--html", "--partial"] {
                let args = os(&[&option, &alias, &trace, &other]);
                failures.extend(refuses("tracestat", args, &alias, &inputs));
            }
        }
    }
    // --combine reads partials: none of them may be overwritten either.
    let partial = inputs.path("part.json");
    let made = Command::new(tool_binary("tracestat"))
        .arg("--partial")
        .arg(&partial)
        .arg(&trace)
        .status()
        .expect("run tracestat --partial");
    assert!(made.success(), "tracestat --partial failed");
    for alias in aliases(&partial) {
        for option in ["--json", "--html"] {
            let args = os(&[&"--combine", &option, &alias, &partial]);
            failures.extend(refuses("tracestat", args, &alias, &inputs));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn analyze_charts_refuse_an_input_as_chart_or_data_output() {
    let mut failures = Vec::new();
    for name in ["metrics_2dev.csv", "stalls_2dev.csv"] {
        let inputs = Inputs::new();
        let input = inputs.path(name);
        let options = inputs.path("options.txt");
        fs::write(&options, "-m XVE_ACTIVE[%] -y Percent\n").expect("option file");
        for victim in [&input, &options] {
            for alias in aliases(victim) {
                for (chart, data) in [
                    (alias.clone(), inputs.path("data-out.csv")),
                    (inputs.path("charts-out.pdf"), alias.clone()),
                ] {
                    let args = os(&[&"-f", &options, &"-o", &chart, &"--data", &data, &input]);
                    failures.extend(refuses("analyze", args, &alias, &inputs));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn categorize_refuses_its_ini_as_output() {
    let mut failures = Vec::new();
    let inputs = Inputs::new();
    let ini = inputs.path("rules.ini");
    for alias in aliases(&ini) {
        let args = os(&[&"--input", &ini, &"--output", &alias]);
        failures.extend(refuses("categorize", args, &alias, &inputs));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn summary_refuses_an_input_as_json_or_per_rank_output() {
    let mut failures = Vec::new();
    let inputs = Inputs::new();
    let tarball = inputs.path("summary.tgz");
    let schema = inputs.path("rules.json");
    for victim in [&tarball, &schema] {
        for alias in aliases(victim) {
            for (json, per_rank) in [
                (alias.clone(), inputs.path("ranks-out.csv")),
                (inputs.path("summary-out.json"), alias.clone()),
            ] {
                let args = os(&[
                    &"--input",
                    &tarball,
                    &"--schema",
                    &schema,
                    &"--output",
                    &json,
                    &"--per-rank",
                    &per_rank,
                ]);
                failures.extend(refuses("summary", args, &alias, &inputs));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn analyze_stall_report_refuses_an_input_as_report() {
    let mut failures = Vec::new();
    let inputs = Inputs::new();
    let stalls = inputs.path("stalls_2dev.csv");
    let dump = inputs.path("dump");
    let asm = fs::read_dir(&dump)
        .expect("dump")
        .flatten()
        .map(|e| e.path())
        .next()
        .expect("an asm file");
    for victim in [&stalls, &asm] {
        for alias in aliases(victim) {
            let args = os(&[
                &"-s",
                &dump,
                &"-r",
                &alias,
                &"-o",
                &inputs.path("stalls-out.pdf"),
                &stalls,
            ]);
            failures.extend(refuses("analyze", args, &alias, &inputs));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn mergetrace_refuses_its_schema_as_output() {
    // Only `-o`: a `--stats` value not ending in `.csv` is read as one more
    // trace (documented), so `--stats rules.json` is no output.
    let mut failures = Vec::new();
    let inputs = Inputs::new();
    let trace = inputs.path("python.4100.1.json");
    let schema = inputs.path("rules.json");
    let stats = inputs.path("stats-out.csv");
    for alias in aliases(&schema) {
        let args = os(&[
            &"-o",
            &alias,
            &"--stats",
            &stats,
            &"--schema",
            &schema,
            &trace,
        ]);
        failures.extend(refuses("mergetrace", args, &alias, &inputs));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
