//! `--csv DIR` / `--parquet DIR` tables at the edges of their layout
//! (docs/formats.md#parquet-tables-tracestat).

use crate::common::run;

/// A rank of one 40 ns kernel: 200 heatmap bins under 1 ns. Their starts
/// at 3 decimals of us repeated (`0.000`, `0.000`, ...), and a
/// Parquet file with repeated column names is refused by polars; the names
/// now take the decimals they need, in the CSV and the Parquet file alike.
#[test]
fn heatmap_columns_of_sub_nanosecond_bins_have_distinct_names() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("tiny.1.0.json");
    std::fs::write(
        &trace,
        r#"{ "traceEvents":[
{"ph": "M", "name": "process_name", "pid": 1, "ts": 1700000000000000.000000, "args": {"name": "RANK 0 HOST<node0>"}},
{"ph": "M", "name": "process_name", "pid": 4294967295, "ts": 1700000000000000.000000, "args": {"name": "RANK 0 DEVICE<node0>[GPU] 0:0:0:0 #0"}},
{"ph": "M", "name": "thread_name", "pid": 4294967295, "tid": 4294967295, "ts": 1700000000000000.000000, "args": {"name": "Thread 1 L0 Compute Engine<0,0>"}},
{"ph": "X", "tid": 1, "pid": 1, "name": "zeCommandListAppendLaunchKernel", "cat": "cpu_op", "ts": 1700000000000100.000000, "dur": 0.020000},
{"ph": "X", "tid": 4294967295, "pid": 4294967295, "name": "gemm", "cat": "gpu_op", "ts": 1700000000000100.010000, "dur": 0.040000, "args": {"id": "1"}}
]}"#,
    )
    .unwrap();
    let (csv, pq) = (dir.path().join("csv"), dir.path().join("pq"));
    let out = run(&[
        trace.as_os_str(),
        "-q".as_ref(),
        "--csv".as_ref(),
        csv.as_os_str(),
        "--parquet".as_ref(),
        pq.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read(csv.join("heatmap.csv")).unwrap();
    let header: Vec<String> = String::from_utf8_lossy(&text)
        .lines()
        .next()
        .unwrap()
        .split(',')
        .map(str::to_owned)
        .collect();
    assert_eq!(header.len(), 201);
    // More than 3 decimals, and the starts strictly increase: no repeats.
    assert_eq!(header[1], "from_0.0000_us", "{header:?}");
    let starts: Vec<f64> = header[1..]
        .iter()
        .map(|h| {
            let start = h.strip_prefix("from_").and_then(|h| h.strip_suffix("_us"));
            start.unwrap_or_else(|| panic!("{h}")).parse().unwrap()
        })
        .collect();
    assert!(
        starts.windows(2).all(|w| w[0] < w[1]),
        "repeated names: {header:?}"
    );
    let parquet = std::fs::read(pq.join("heatmap.parquet")).unwrap();
    unitrace_render::table::same_as_csv(&text, parquet.clone()).unwrap();
    let schema = unitrace_render::table::parquet_schema(parquet).unwrap();
    assert!(schema.columns[1..]
        .iter()
        .all(|c| c.ty == unitrace_render::parquet::ColumnType::Float64));
}

fn kineto(dir: &str) -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/kineto")
        .join(dir);
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    v.sort();
    v
}

/// `tracestat INPUTS -q --csv DIR EXTRA...`; the folder.
fn csv_of(
    inputs: &[std::path::PathBuf],
    dir: &std::path::Path,
    extra: &[&str],
) -> std::path::PathBuf {
    let csv = dir.join("csv");
    let mut args: Vec<&std::ffi::OsStr> = inputs.iter().map(|p| p.as_os_str()).collect();
    args.extend(["-q".as_ref(), "--csv".as_ref(), csv.as_os_str()]);
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    csv
}

/// Reads each CSV file named on the command line with pandas, Dask
/// (`compute()`: every partition checked against the dtypes Dask guessed
/// from the first rows), polars and DuckDB's sniffer; prints per file and
/// reader the column names and the `step` column's type.
const READ_CSVS: &str = r#"
import json, sys
import dask.dataframe as dd
import duckdb
import pandas as pd
import polars as pl

out = {}
for path in sys.argv[1:]:
    got = {}
    df = pd.read_csv(path)
    got["pandas"] = [list(df.columns), str(df.dtypes.get("step", ""))]
    df = dd.read_csv(path).compute()
    got["dask"] = [list(df.columns), str(df.dtypes.get("step", ""))]
    df = pl.read_csv(path)
    got["polars"] = [df.columns, str(df.schema.get("step", ""))]
    rel = duckdb.sql(f"SELECT * FROM read_csv_auto('{path}')")
    types = dict(zip(rel.columns, map(str, rel.types)))
    got["duckdb"] = [rel.columns, types.get("step", "")]
    got["rows"] = len(df)
    out[path.rsplit("/", 1)[-1]] = got
print(json.dumps(out))
"#;

fn read_csvs(files: &[std::path::PathBuf]) -> serde_json::Value {
    let args: Vec<&std::ffi::OsStr> = files.iter().map(|p| p.as_os_str()).collect();
    crate::common::python_json(READ_CSVS, &args)
}

/// `what_if.csv` held its `total` rows in the `step` column: Dask guesses
/// a column's dtype from the first rows, found `step` an integer and
/// failed on `total` further down; polars and DuckDB read every step id as
/// text. The totals are now `what_if_totals.csv`, and `step` is an integer
/// to every reader, as in the other step tables (docs/tracestat.md#what-if).
/// Five steps and three rules: 15 rows, past the rows Dask samples.
#[test]
fn step_tables_read_with_integer_steps_in_pandas_dask_polars_and_duckdb() {
    let dir = tempfile::tempdir().unwrap();
    let csv = csv_of(
        &kineto("recorded/planted"),
        dir.path(),
        &[
            "--what-if",
            "comm=0",
            "--what-if",
            "launch=0",
            "--what-if",
            "kernel:*gemm*=-20%",
        ],
    );
    let names = [
        "what_if",
        "steps",
        "step_spread",
        "critical_path_steps",
        "critical_path",
    ];
    let files: Vec<_> = names.iter().map(|n| csv.join(format!("{n}.csv"))).collect();
    let got = read_csvs(&files);
    for n in names {
        let t = &got[format!("{n}.csv")];
        for (reader, int) in [
            ("pandas", "int64"),
            ("dask", "int64"),
            ("polars", "Int64"),
            ("duckdb", "BIGINT"),
        ] {
            assert_eq!(t[reader][1], int, "{n}.csv step read by {reader}: {t}");
        }
    }
    assert_eq!(got["what_if.csv"]["rows"], 15);
    let totals = std::fs::read_to_string(csv.join("what_if_totals.csv")).unwrap();
    let lines: Vec<&str> = totals.lines().collect();
    assert_eq!(
        lines[0], "rule,steps,dur_us,what_if_dur_us,change_pct",
        "{totals}"
    );
    assert_eq!(lines.len(), 4, "a row per rule: {totals}");
    assert!(lines[1].starts_with("comm=0,5,"), "{totals}");
}

/// One rank (`#0`) of a Kineto trace: its heatmap row is a label DuckDB
/// types as text and numbers, like the header was (`rank,0.000,...`), so
/// the sniffer took the header for data (`column000`, ...). The bins'
/// names are no numbers now (docs/tracestat.md#heatmap).
#[test]
fn a_one_rank_heatmap_csv_keeps_its_header_in_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let csv = csv_of(&kineto("hta/triton_example"), dir.path(), &[]);
    let got = read_csvs(&[csv.join("heatmap.csv")]);
    let t = &got["heatmap.csv"];
    let header = std::fs::read_to_string(csv.join("heatmap.csv")).unwrap();
    let header: Vec<&str> = header.lines().next().unwrap().split(',').collect();
    assert_eq!(header.len(), 201);
    assert_eq!(header[..3], ["rank", "from_0.000_us", "from_68450.684_us"]);
    for reader in ["pandas", "dask", "polars", "duckdb"] {
        assert_eq!(t[reader][0], serde_json::json!(header), "{reader}");
    }
    assert_eq!(t["rows"], 1);
}

/// The names in backticks of a Markdown text.
fn ticked(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Whether `column` is `documented`, or matches one of its patterns
/// (`count_<bin>`, `<cause>_us`: anything in place of `<...>`).
fn documented(column: &str, documented: &[&str]) -> bool {
    documented.iter().any(|d| match (d.find('<'), d.find('>')) {
        (Some(a), Some(b)) if a < b => {
            let (pre, post) = (&d[..a], &d[b + 1..]);
            column.len() > pre.len() + post.len()
                && column.starts_with(pre)
                && column.ends_with(post)
        }
        _ => column == *d,
    })
}

/// docs/formats.md#parquet-tables-tracestat and the "CSV files" list of
/// docs/tracestat.md name every table a run writes and each table's
/// columns; they had left out the critical path's four tables, `what_if`,
/// `clock_offsets` and the breakdown's active-window columns. The run:
/// the generated ranks, whose clocks are aligned (`clock_offsets`), with
/// `--tree` and a what-if rule, so that every table is written.
#[test]
fn the_documented_tables_are_the_ones_written() {
    let dir = tempfile::tempdir().unwrap();
    let csv = csv_of(
        &crate::common::gen_files(),
        dir.path(),
        &["--tree=3", "--what-if", "comm=0"],
    );
    let mut written: Vec<(String, Vec<String>)> = std::fs::read_dir(&csv)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let header = text.lines().next().unwrap_or_default();
            (
                path.file_stem().unwrap().to_string_lossy().into_owned(),
                header.split(',').map(str::to_owned).collect(),
            )
        })
        .collect();
    written.sort();
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
    let formats = std::fs::read_to_string(docs.join("formats.md")).unwrap();
    let section = &formats[formats.find("### parquet-tables-tracestat").unwrap()..];
    let section = &section[..section[4..].find("\n### ").unwrap() + 4];
    // `| files | int64 | double | string, bool |`: the file names before the
    // first `|` of a row, the columns after it.
    let mut rows: Vec<(String, Vec<&str>)> = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let (files, columns) = line[1..].split_once('|').unwrap();
        for f in ticked(files).into_iter().filter(|f| !f.starts_with("--")) {
            rows.push((f.to_string(), ticked(columns)));
        }
    }
    rows.sort();
    let files: Vec<&String> = written.iter().map(|w| &w.0).collect();
    let in_formats: Vec<&String> = rows.iter().map(|r| &r.0).collect();
    assert_eq!(in_formats, files, "docs/formats.md");
    for ((file, header), (_, doc)) in written.iter().zip(&rows) {
        if file == "heatmap" {
            // One column per bin, described in words.
            assert!(header[1..].iter().all(|c| c.starts_with("from_")));
            continue;
        }
        for column in header {
            assert!(
                documented(column, doc),
                "docs/formats.md: {file}.{column} missing"
            );
        }
    }
    let guide = std::fs::read_to_string(docs.join("tracestat.md")).unwrap();
    let list = &guide[guide.find("\n## CSV files").unwrap()..];
    let list = &list[..list[3..].find("\n## ").unwrap()];
    let mut listed: Vec<String> = ticked(list)
        .into_iter()
        .filter_map(|n| n.strip_suffix(".csv"))
        .map(str::to_owned)
        .collect();
    listed.sort();
    listed.dedup();
    let listed: Vec<&String> = listed.iter().collect();
    assert_eq!(listed, files, "docs/tracestat.md#csv-files");
}

/// The tables of a row per rank and step (`steps`), per collective
/// instance (`collectives`), per rank's wait at one (`collective_waits`)
/// and per stretch of the path (`critical_path`) hold as values only the
/// rows the screen shows; their files' rows are made while the files are
/// written (docs/tracestat.md#scale), every one of them: the files hold
/// the rows of the JSON report.
#[test]
fn tables_of_a_row_per_step_or_call_hold_only_their_shown_rows() {
    use clap::Parser;
    // Recorded: 4 ranks of FSDP, 5 steps, 60 collective calls.
    let fsdp =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/kineto/recorded/fsdp");
    let args = [
        "tracestat".to_string(),
        "-q".to_string(),
        fsdp.to_string_lossy().into_owned(),
    ];
    let plan = tracestat::plan::plan(tracestat::args::Args::parse_from(&args)).unwrap();
    let tracestat::plan::Source::Traces(paths) = &plan.source else {
        panic!("traces expected");
    };
    let found = tracestat::summarize_files(paths, None, &plan.rank_options, None).unwrap();
    let report = tracestat::analyzers::build(found.ranks, plan.rank_options.clone(), &plan.report);
    // Read as the report's writer writes it: its long tables' rows go to
    // it as JSON text (`unitrace_render::json::JsonRow`).
    let mut text = Vec::new();
    unitrace_render::json::write_report(&mut text, &report, unitrace_render::json::TABLE_DEPTH)
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let (_, sections) = tracestat::sections(&report, None);
    let tables: Vec<&unitrace_render::sections::Table> =
        sections.iter().flat_map(|s| &s.tables).collect();
    let rows_of = |name: &str| json[name].as_array().map_or(0, Vec::len);
    let waits: usize = json["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["waits_us"].as_array().map_or(0, Vec::len))
        .sum();
    for (file, all) in [
        ("steps", rows_of("steps")),
        ("collectives", rows_of("collectives")),
        ("collective_waits", waits),
        ("critical_path", rows_of("critical_path")),
    ] {
        let t = tables.iter().find(|t| t.file == file).unwrap();
        let mut written = 0;
        let _ = t.for_each_file_row(|_| -> Result<(), ()> {
            written += 1;
            Ok(())
        });
        assert!(all >= 20, "{file}: {all} rows");
        assert_eq!(written, all, "{file}");
        let shown = t.screen_rows.as_ref().map_or(t.rows.len(), |s| s.0.len());
        assert!(
            t.rows.len() <= shown.max(1) && t.rows.len() < all,
            "{file}: {} rows held",
            t.rows.len()
        );
    }
}

/// The report of `inputs` as `tracestat -q` builds it.
fn report_of(inputs: &[std::path::PathBuf]) -> tracestat::analyzers::Report {
    use clap::Parser;
    let mut args = vec!["tracestat".to_string(), "-q".to_string()];
    args.extend(inputs.iter().map(|p| p.to_string_lossy().into_owned()));
    let plan = tracestat::plan::plan(tracestat::args::Args::parse_from(&args)).unwrap();
    let tracestat::plan::Source::Traces(paths) = &plan.source else {
        panic!("traces expected");
    };
    let found = tracestat::summarize_files(paths, None, &plan.rank_options, None).unwrap();
    tracestat::analyzers::build(found.ranks, plan.rank_options.clone(), &plan.report)
}

/// Every file of `dir`, by name, and its bytes.
fn files_of(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

/// Where the page's cap leaves nothing out, its sections stand for the
/// files' (`tracestat::write_report` builds them once): the tables
/// written from either are byte for byte the same, and so is the page.
/// Where it leaves a rank out, it says so. On the recorded FSDP run (4
/// ranks) and on four ranks with a truncated input, the one list the
/// inputs' section caps by the count itself.
#[test]
fn sections_a_cap_leaves_nothing_out_of_are_the_files() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
    let coll: Vec<std::path::PathBuf> = (0..4)
        .map(|i| data.join(format!("tracestat/coll.200{i}.{i}.json")))
        .collect();
    for inputs in [vec![data.join("kineto/recorded/fsdp")], coll] {
        let report = report_of(&inputs);
        let (capped, _) = tracestat::sections(&report, Some(3));
        assert!(!capped.cuts_nothing(&report), "{inputs:?}: 3 of 4 ranks");
        let (screen, page) = tracestat::sections(&report, Some(32));
        assert!(screen.cuts_nothing(&report), "{inputs:?}");
        let (_, files) = tracestat::sections(&report, None);
        let dir = tempfile::tempdir().unwrap();
        for format in [
            unitrace_render::table::TableFormat::Csv,
            unitrace_render::table::TableFormat::Parquet,
        ] {
            let (a, b) = (dir.path().join("page"), dir.path().join("files"));
            unitrace_render::sections::write_dir(&a, page.iter().flat_map(|s| &s.tables), format)
                .unwrap();
            unitrace_render::sections::write_dir(&b, files.iter().flat_map(|s| &s.tables), format)
                .unwrap();
            let (a, b) = (files_of(&a), files_of(&b));
            assert!(a.len() > 10, "{inputs:?}: {} files", a.len());
            assert_eq!(a, b, "{inputs:?} {format:?}");
            std::fs::remove_dir_all(dir.path().join("page")).unwrap();
            std::fs::remove_dir_all(dir.path().join("files")).unwrap();
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        tracestat::html::write(&mut a, &report, &page).unwrap();
        tracestat::html::write(&mut b, &report, &files).unwrap();
        assert!(a == b, "{inputs:?}: the pages differ");
    }
}
