//! Every option that writes a table, run once with a CSV name and once with
//! a `.parquet` name (tracestat: `--csv DIR` and `--parquet DIR`) on
//! bundled testdata; then python3 reads each Parquet file with DuckDB and
//! with polars (`parquet_tables.py`) and checks that both see the CSV's
//! columns in order, its rows and values, the types of
//! docs/formats.md#parquet-tables (int64 for integer nanoseconds and
//! counts, never strings), zstd pages and dictionary-encoded strings.
//! scripts/test.sh installs duckdb and polars when they are missing.
//! analyze `--data` is here for a metric chart over time with report
//! validity and for stall charts; analyze/tests/data_parquet.rs checks
//! its other chart modes.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use unitrace_system_tests::{repo_root, tool_binary};

/// DuckDB's type names, which the checker uses for both readers.
const BIGINT: &str = "BIGINT";
const DOUBLE: &str = "DOUBLE";
const VARCHAR: &str = "VARCHAR";
const BOOLEAN: &str = "BOOLEAN";

/// One table written twice by the same command.
struct Table {
    name: String,
    csv: PathBuf,
    parquet: PathBuf,
    /// Each column of the CSV header with the type its Parquet column
    /// must read as.
    types: Vec<(String, &'static str)>,
    min_rows: usize,
}

fn data(rel: &str) -> OsString {
    repo_root().join(rel).into_os_string()
}

/// Runs `tool` in `cwd`; it must succeed with at most warnings and notes
/// on stderr.
fn run(tool: &str, args: &[OsString], cwd: &Path) {
    let out = Command::new(tool_binary(tool))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {tool}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{tool} {args:?} failed: {stderr}");
    let (warning, note) = (format!("{tool}: warning: "), format!("{tool}: note: "));
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            line.starts_with(&warning) || line.starts_with(&note),
            "{tool} {args:?}: unexpected stderr line {line:?}"
        );
    }
}

/// The header of a CSV file (the tools quote no header field).
fn csv_header(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let first = text.lines().next().unwrap_or_default();
    assert!(
        !first.contains('"'),
        "{}: quoted header {first:?}",
        path.display()
    );
    first.split(',').map(str::to_owned).collect()
}

/// Runs `args(name)` once with `NAME.csv` and once with `NAME.parquet` in
/// `dir` and returns the table, typed by `ty`.
fn one_table(
    tool: &str,
    dir: &Path,
    name: &str,
    args: impl Fn(&Path) -> Vec<OsString>,
    ty: fn(&str) -> &'static str,
    min_rows: usize,
) -> Table {
    let csv = dir.join(format!("{name}.csv"));
    let parquet = dir.join(format!("{name}.parquet"));
    run(tool, &args(&csv), dir);
    run(tool, &args(&parquet), dir);
    let types = csv_header(&csv)
        .into_iter()
        .map(|c| {
            let t = ty(&c);
            (c, t)
        })
        .collect();
    Table {
        name: format!("{tool} {name}"),
        csv,
        parquet,
        types,
        min_rows,
    }
}

fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

// The expected types, written from docs/formats.md#parquet-tables (not
// from the tools' schemas, which they check).

fn summary_type(col: &str) -> &'static str {
    if col == "rank" || col == "pid" || col.ends_with("_ns") || col.ends_with("_calls") {
        BIGINT
    } else {
        VARCHAR
    }
}

fn roofline_type(col: &str) -> &'static str {
    match col {
        "kernel" | "level" | "precision" | "roof_kind" => VARCHAR,
        "time_ns" | "instances" => BIGINT,
        "above_roof" | "plotted" => BOOLEAN,
        _ => DOUBLE,
    }
}

fn mergetrace_type(col: &str) -> &'static str {
    match col {
        "row" | "rank" | "file" | "kernel" | "category" | "host_range" => VARCHAR,
        "count" => BIGINT,
        _ => DOUBLE,
    }
}

/// docs/analyze.md#data-file.
fn analyze_data_type(col: &str) -> &'static str {
    match col {
        "instance" | "sample" => BIGINT,
        "time_us" | "value" => DOUBLE,
        _ => VARCHAR,
    }
}

fn compare_type(col: &str) -> &'static str {
    match col {
        "section" | "name" | "baseline_name" | "status" | "metric" => VARCHAR,
        "significant" => BOOLEAN,
        _ => DOUBLE,
    }
}

/// tracestat: the integer columns of each file, as listed in
/// docs/formats.md#parquet-tables-tracestat; labels are strings,
/// `consistent` a boolean, every other column a double.
fn tracestat_type(file: &str, col: &str) -> &'static str {
    const LABELS: &[&str] = &[
        "rank",
        "device",
        "file",
        "range",
        "path",
        "kernel",
        "name",
        "comm",
        "last_rank",
        "most_often_last",
        "category",
        "class",
        "rank_min",
        "rank_max",
        "kind",
        "host_range",
        "rule",
        "evidence",
        "fix",
        "savings_by",
        "steady_state",
        "source",
        "outliers",
        "slowest_rank",
        "busiest_rank",
        "end_rank",
    ];
    let ints: &[&str] = match file {
        "breakdown" => &["launches"],
        "idle_gaps" => &["gaps"],
        "launches" => &["kernels", "with_flow", "negative_latency", "short_kernels"],
        "host_ranges" => &["ranks", "calls", "launches", "self_launches"],
        "host_tree" => &["launches"],
        "collectives" => &["bytes", "occurrence", "ranks"],
        "collective_waits" => &["bytes", "occurrence"],
        "collective_summary" => &["instances", "bytes_total"],
        "stragglers" => &["arrived_last", "collectives"],
        "categories" | "kernels" => &["count", "ranks"],
        "implausible" => &["count"],
        "copies" => &[
            "copies",
            "bytes",
            "sized",
            "pageable",
            "small",
            "on_compute_queue",
        ],
        "setup_calls" => &["calls", "steady_calls"],
        "findings" => &["ranks", "count"],
        "steps" => &["step", "kernels", "launches"],
        "step_ranks" => &["steps_found", "warmup_dropped", "steps", "max_step"],
        "step_spread" => &["step", "ranks"],
        "critical_path" => &["seq"],
        "critical_path_steps" => &["ranks_on_path", "rank_changes"],
        "critical_path_kinds" => &["items"],
        "critical_path_names" => &["items", "steps"],
        "what_if_totals" => &["steps"],
        _ => &[],
    };
    let idle_gap_counts =
        file == "idle_gaps" && (col.starts_with("count_") || col.ends_with("_gaps"));
    // `findings` and the critical path name their step as text (`3`,
    // `all`: the whole run); the step tables number theirs.
    let text_step = matches!(
        file,
        "findings" | "critical_path" | "critical_path_steps" | "what_if"
    );
    if LABELS.contains(&col) || (text_step && col == "step") {
        VARCHAR
    } else if col == "consistent" || col == "outlier" {
        BOOLEAN
    } else if ints.contains(&col) || idle_gap_counts {
        BIGINT
    } else {
        DOUBLE
    }
}

/// `tracestat --csv DIR` and `--parquet DIR` of one run each: every table
/// of the CSV folder must have its Parquet twin and nothing else.
fn tracestat_tables(dir: &Path) -> Vec<Table> {
    let csv_dir = dir.join("tables-csv");
    let pq_dir = dir.join("tables-parquet");
    let inputs: Vec<OsString> = (0..4)
        .map(|r| data(&format!("testdata/tracestat/coll.{}.{r}.json", 2000 + r)))
        .collect();
    for (option, out) in [("--csv", &csv_dir), ("--parquet", &pq_dir)] {
        let mut args = inputs.clone();
        // Each collective call a step, so that the step tables have rows
        // (docs/tracestat.md#steps); the other tables do not change.
        // A what-if rule, for `what_if` and `what_if_totals`.
        args.extend(os(&[
            "-q",
            "--tree=3",
            "--step",
            "oneCCL::|MPI::",
            "--what-if",
            "comm=0",
            option,
        ]));
        args.push(out.clone().into_os_string());
        run("tracestat", &args, dir);
    }
    let stems = |d: &Path, ext: &str| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let names = stems(&csv_dir, "csv");
    assert_eq!(names, stems(&pq_dir, "parquet"), "tracestat table files");
    // Every table, each with rows on these traces (their implausible
    // events are there on purpose), so that values are checked, not only
    // headers.
    let filled = [
        "implausible",
        "breakdown",
        "overlap",
        "idle_gaps",
        "launches",
        "host_ranges",
        "host_tree",
        "collectives",
        "collective_waits",
        "collective_summary",
        "stragglers",
        "categories",
        "kernels",
        "heatmap",
        "copies",
        "steps",
        "step_ranks",
        "step_spread",
        "critical_path",
        "critical_path_kinds",
        "critical_path_names",
        "critical_path_steps",
        "what_if",
        "what_if_totals",
    ];
    // Tables these traces leave without rows (no set-up call, no finding):
    // their headers and types are checked.
    let empty = ["setup_calls", "findings"];
    let mut want: Vec<&str> = filled.iter().chain(&empty).copied().collect();
    want.sort();
    assert_eq!(names, want, "tracestat tables");
    names
        .iter()
        .map(|stem| {
            let csv = csv_dir.join(format!("{stem}.csv"));
            let types = csv_header(&csv)
                .into_iter()
                .map(|c| {
                    let t = tracestat_type(stem, &c);
                    (c, t)
                })
                .collect();
            Table {
                name: format!("tracestat {stem}"),
                csv,
                parquet: pq_dir.join(format!("{stem}.parquet")),
                types,
                min_rows: usize::from(filled.contains(&stem.as_str())),
            }
        })
        .collect()
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn manifest(tables: &[Table]) -> String {
    let items: Vec<String> = tables
        .iter()
        .map(|t| {
            let types: Vec<String> = t
                .types
                .iter()
                .map(|(c, ty)| format!("[{},{}]", json_string(c), json_string(ty)))
                .collect();
            format!(
                "{{\"name\":{},\"csv\":{},\"parquet\":{},\"min_rows\":{},\"types\":[{}]}}",
                json_string(&t.name),
                json_string(&t.csv.to_string_lossy()),
                json_string(&t.parquet.to_string_lossy()),
                t.min_rows,
                types.join(",")
            )
        })
        .collect();
    format!("[{}]", items.join(",\n"))
}

#[test]
fn every_table_option_writes_parquet_that_duckdb_and_polars_read_as_the_csv() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut tables = Vec::new();

    tables.push(one_table(
        "summary",
        dir,
        "ranks",
        |out| {
            vec![
                "--input".into(),
                data("testdata/summary/plain.tgz"),
                "--schema".into(),
                data("schemas/LLaMA.json"),
                "--output".into(),
                "s.json".into(),
                "--per-rank".into(),
                out.into(),
            ]
        },
        summary_type,
        4,
    ));
    tables.push(one_table(
        "roofline",
        dir,
        "roofline",
        |out| {
            vec![
                "--compute".into(),
                data("testdata/roofline/gen_mixed_compute.txt"),
                "--memory".into(),
                data("testdata/roofline/gen_mixed_memory.txt"),
                "--device".into(),
                "pvc".into(),
                "--output".into(),
                "r.html".into(),
                "--data".into(),
                out.into(),
            ]
        },
        roofline_type,
        2,
    ));
    for (name, schema) in [("stats", false), ("stats-schema", true)] {
        tables.push(one_table(
            "mergetrace",
            dir,
            name,
            |out| {
                let mut a = os(&["-o", "m.json", "--stats"]);
                a.push(out.into());
                if schema {
                    a.push("--schema".into());
                    a.push(data("testdata/trace/categories/schema.json"));
                }
                a.push(data("testdata/trace/categories/python.300.0.json"));
                a.push(data("testdata/trace/categories/python.400.1.json"));
                a
            },
            mergetrace_type,
            4,
        ));
    }
    // Traces (rows with `significant`) and metric CSVs (rows per metric,
    // where it and the noise columns are null).
    for (name, base, cand) in [
        (
            "compare-traces",
            "testdata/compare/base",
            "testdata/compare/cand",
        ),
        (
            "compare-metrics",
            "testdata/compare/base.metrics.csv",
            "testdata/compare/cand.metrics.csv",
        ),
    ] {
        tables.push(one_table(
            "compare",
            dir,
            name,
            |out| {
                vec![
                    data(base),
                    data(cand),
                    "-q".into(),
                    "--csv".into(),
                    out.into(),
                ]
            },
            compare_type,
            2,
        ));
    }
    for (name, input, extra) in [
        (
            "analyze-metric",
            "testdata/metrics/validity/validity_bmg.csv",
            &["-i", "0", "-m", "GpuTime[ns]", "-y", "t", "--x", "time"][..],
        ),
        (
            "analyze-stall",
            "testdata/stall_report/src/stalls.csv",
            &[][..],
        ),
    ] {
        tables.push(one_table(
            "analyze",
            dir,
            name,
            |out| {
                let mut a = vec![data(input)];
                a.extend(os(extra));
                a.extend(os(&["-o", &format!("{name}.svg"), "--data"]));
                a.push(out.into());
                a
            },
            analyze_data_type,
            2,
        ));
    }
    tables.extend(tracestat_tables(dir));

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/parquet_tables.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 is needed to read the Parquet tables with DuckDB and polars");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(manifest(&tables).as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(2), "{stderr}");
    assert!(
        out.status.success(),
        "the Parquet tables do not read back as their CSVs:\n{stderr}"
    );
    // Every table was read by both readers (the script cannot skip one).
    for t in &tables {
        for reader in ["duckdb", "polars"] {
            let ok = format!("ok {reader} {} ", t.name);
            assert!(
                stdout.lines().any(|l| l.starts_with(&ok)),
                "{reader} did not check {}:\n{stdout}",
                t.name
            );
        }
    }
}
