//! `--data FILE.parquet` (docs/analyze.md#data-file): for every chart mode
//! that writes `--data` (metric charts, `--x time`, files with validity
//! columns, both together, stall charts) the Parquet file of a run holds
//! the rows of the CSV of the same run, with the documented column types,
//! read back with the `parquet` crate and with DuckDB; a `.parquet` path
//! that cannot be written is one error line and no output.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{analyze, stderr};
use parquet::basic::Encoding;
use parquet::file::reader::{FileReader, SerializedFileReader};
use unitrace_render::table::{parquet_schema, same_as_csv};

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(path)
}

/// One chart mode: its input and options.
struct Case {
    name: &'static str,
    input: &'static str,
    args: &'static [&'static str],
    /// `name:Type` of each column, `?` when nullable.
    types: &'static [&'static str],
}

const METRIC: [&str; 5] = [
    "kernel:Utf8",
    "instance:Int64",
    "sample:Int64",
    "metric:Utf8",
    "value:Float64",
];

const CASES: [Case; 5] = [
    Case {
        name: "metric charts",
        input: "charts/sampling.csv",
        args: &[
            "-i",
            "0",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "A",
            "-b",
            "GPU_MEMORY_BYTE_READ[bytes]",
        ],
        types: &METRIC,
    },
    Case {
        name: "metric charts over time",
        input: "charts/sampling.csv",
        args: &[
            "-i",
            "0",
            "-m",
            "XVE_ACTIVE[%]",
            "-y",
            "A",
            "-b",
            "GPU_MEMORY_BYTE_READ[bytes]",
            "--x",
            "time",
        ],
        types: &[
            "kernel:Utf8",
            "instance:Int64",
            "sample:Int64",
            "time_us:Float64",
            "metric:Utf8",
            "value:Float64",
        ],
    },
    Case {
        name: "metric charts with report validity",
        input: "metrics/validity/validity_bmg.csv",
        args: &["-i", "0", "-m", "GpuTime[ns]", "-y", "t", "--keep-invalid"],
        types: &[
            "kernel:Utf8",
            "instance:Int64",
            "sample:Int64",
            "metric:Utf8",
            "value:Float64",
            "report:Utf8?",
        ],
    },
    Case {
        name: "report validity over time",
        input: "metrics/validity/validity_bmg.csv",
        args: &["-i", "0", "-m", "GpuTime[ns]", "-y", "t", "--x", "time"],
        types: &[
            "kernel:Utf8",
            "instance:Int64",
            "sample:Int64",
            "time_us:Float64",
            "metric:Utf8",
            "value:Float64",
            "report:Utf8?",
        ],
    },
    Case {
        name: "stall charts",
        input: "stall_report/src/stalls.csv",
        args: &[],
        types: &[
            "kernel:Utf8",
            "instance:Int64?",
            "ip:Utf8",
            "metric:Utf8",
            "value:Float64",
        ],
    },
];

/// The outputs of one run of `case` with `--data DATA` in a fresh folder:
/// the data file's bytes and the chart's.
fn run(case: &Case, data: &str) -> (Vec<u8>, Vec<u8>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let input = testdata(case.input);
    let mut args = vec![input.to_str().unwrap(), "-o", "c.svg", "--data", data];
    args.extend_from_slice(case.args);
    let out = analyze(dir.path(), &args);
    assert!(out.status.success(), "{}: {}", case.name, stderr(&out));
    let data = std::fs::read(dir.path().join(data)).unwrap();
    let svg = std::fs::read(dir.path().join("c.svg")).unwrap();
    (data, svg, dir)
}

/// The columns whose chunks are dictionary-encoded, in every row group.
fn dictionary_columns(pq: &[u8]) -> Vec<String> {
    let reader = SerializedFileReader::new(bytes::Bytes::from(pq.to_vec())).unwrap();
    let meta = reader.metadata();
    assert!(meta.num_row_groups() > 0);
    let schema = meta.file_metadata().schema_descr();
    (0..schema.num_columns())
        .filter(|&c| {
            meta.row_groups().iter().all(|g| {
                let chunk = g.column(c);
                chunk.dictionary_page_offset().is_some()
                    && chunk.encodings().any(|e| e == Encoding::RLE_DICTIONARY)
            })
        })
        .map(|c| schema.column(c).name().to_string())
        .collect()
}

#[test]
fn every_data_mode_writes_the_csv_rows_typed_as_parquet() {
    for case in &CASES {
        let (csv, csv_svg, _d1) = run(case, "d.csv");
        let (pq, pq_svg, _d2) = run(case, "d.parquet");
        let name = case.name;
        assert!(pq.starts_with(b"PAR1") && pq.ends_with(b"PAR1"), "{name}");
        assert_eq!(
            csv_svg, pq_svg,
            "{name}: the charts do not depend on --data"
        );
        let header = String::from_utf8_lossy(&csv)
            .lines()
            .next()
            .unwrap()
            .to_string();
        let names: Vec<&str> = case
            .types
            .iter()
            .map(|t| t.split(':').next().unwrap())
            .collect();
        assert_eq!(header, names.join(","), "{name}");
        let rows = String::from_utf8_lossy(&csv).lines().count() - 1;
        assert!(rows >= 12, "{name}: {rows} rows");
        // Same header, same number of rows, every field equal as its
        // column's type (numbers by value, empty = null).
        same_as_csv(&csv, pq.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let schema = parquet_schema(pq.clone()).unwrap();
        let types: Vec<String> = schema
            .columns
            .iter()
            .map(|c| format!("{}:{:?}{}", c.name, c.ty, if c.nullable { "?" } else { "" }))
            .collect();
        assert_eq!(types, case.types, "{name}");
        let dict = dictionary_columns(&pq);
        for column in ["kernel", "metric"] {
            assert!(
                dict.iter().any(|c| c == column),
                "{name}: {column} not dictionary-encoded: {dict:?}"
            );
        }
        assert!(
            !dict.iter().any(|c| c == "value"),
            "{name}: numbers are plain"
        );
    }
}

/// What each case's file has that a CSV reader would only see as text: the
/// marks and the empty instances of stall charts as nulls.
#[test]
fn parquet_nulls_are_the_csv_empty_fields() {
    use parquet::record::Field;
    let nulls = |pq: Vec<u8>, column: &str| -> (usize, usize) {
        let reader = SerializedFileReader::new(bytes::Bytes::from(pq)).unwrap();
        let (mut null, mut all) = (0, 0);
        for row in reader.get_row_iter(None).unwrap() {
            let row = row.unwrap();
            let (_, field) = row.get_column_iter().find(|(n, _)| *n == column).unwrap();
            all += 1;
            if matches!(field, Field::Null) {
                null += 1;
            }
        }
        (null, all)
    };
    let stalls = &CASES[4];
    let (pq, _, _d) = run(stalls, "d.parquet");
    let (null, all) = nulls(pq, "instance");
    assert!(all > 0);
    assert_eq!(null, all, "stall charts have no instance");
    // --keep-invalid: every drawn report has a mark.
    let marked = &CASES[2];
    let (pq, _, _d) = run(marked, "d.parquet");
    let (null, all) = nulls(pq, "report");
    assert!(all > 0);
    assert_eq!(null, 0);
}

#[test]
fn duckdb_reads_every_data_mode_with_the_documented_types() {
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (i, case) in CASES.iter().enumerate() {
        let (csv, _, _) = run(case, "d.csv");
        let (pq, _, _) = run(case, "d.parquet");
        let csv_path = dir.path().join(format!("{i}.csv"));
        let pq_path = dir.path().join(format!("{i}.parquet"));
        std::fs::write(&csv_path, &csv).unwrap();
        std::fs::write(&pq_path, &pq).unwrap();
        files.push((csv_path, pq_path));
    }
    // For each file: the column types DuckDB sees, its row count, and the
    // rows of the Parquet file not in the CSV: the CSV is read as text and
    // cast to the Parquet file's types (DuckDB spells numbers unlike Rust,
    // so the rows are compared as values, not as text).
    let script = r#"
import json, sys
try:
    import duckdb
except ImportError:
    sys.stderr.write("the Python package duckdb is missing: pip install --user duckdb (scripts/test.sh does it)\n")
    sys.exit(3)
con = duckdb.connect()
out = []
for csv, pq in json.loads(sys.argv[1]):
    types = [(r[0], r[1]) for r in con.sql(f"DESCRIBE SELECT * FROM read_parquet('{pq}')").fetchall()]
    rows = con.sql(f"SELECT count(*) FROM read_parquet('{pq}')").fetchall()[0][0]
    text = con.sql(f"SELECT * FROM read_csv('{csv}', all_varchar = true, header = true)")
    # An empty field is null in a number column and in `report`.
    def typed_column(n, t):
        if t == "VARCHAR" and n != "report":
            return f'"{n}"'
        return f"CASE WHEN \"{n}\" = '' THEN NULL ELSE \"{n}\" END::{t} AS \"{n}\""
    casts = ", ".join(typed_column(n, t) for n, t in types)
    typed = f"SELECT {casts} FROM read_csv('{csv}', all_varchar = true, header = true)"
    differ = con.sql(f"SELECT count(*) FROM (({typed}) EXCEPT ALL (SELECT * FROM read_parquet('{pq}')))").fetchall()[0][0]
    out.append({"types": types, "rows": rows, "differ": differ})
json.dump(out, sys.stdout)
"#;
    let arg = serde_json::to_string(
        &files
            .iter()
            .map(|(c, p)| (c.to_str().unwrap(), p.to_str().unwrap()))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let py = Command::new("python3")
        .args(["-c", script, &arg])
        .output()
        .expect("python3 is needed to read the files with DuckDB");
    assert!(
        py.status.success(),
        "DuckDB failed (install with `pip install --user duckdb`; scripts/test.sh does it):\n{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let res: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
    for (i, case) in CASES.iter().enumerate() {
        let r = &res[i];
        let csv_rows = std::fs::read_to_string(&files[i].0)
            .unwrap()
            .lines()
            .count()
            - 1;
        assert_eq!(r["rows"], csv_rows, "{}", case.name);
        assert_eq!(r["differ"], 0, "{}: rows differ from the CSV's", case.name);
        let types: Vec<String> = r["types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| format!("{}:{}", t[0].as_str().unwrap(), t[1].as_str().unwrap()))
            .collect();
        let expected: Vec<String> = case
            .types
            .iter()
            .map(|t| {
                let (name, ty) = t.split_once(':').unwrap();
                let duck = match ty.trim_end_matches('?') {
                    "Utf8" => "VARCHAR",
                    "Int64" => "BIGINT",
                    "Float64" => "DOUBLE",
                    other => panic!("{other}"),
                };
                format!("{name}:{duck}")
            })
            .collect();
        assert_eq!(types, expected, "{}", case.name);
    }
}

/// A `.parquet` path that cannot be written: one line, exit 1, no output
/// of the run (neither the chart nor a partial data file), whatever the
/// mode.
#[test]
fn unwritable_parquet_path_is_one_error_line_and_no_output() {
    for case in [&CASES[0], &CASES[2], &CASES[4]] {
        for data in ["missing/d.parquet", "dir.parquet"] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir(dir.path().join("dir.parquet")).unwrap();
            let input = testdata(case.input);
            let mut args = vec![input.to_str().unwrap(), "-o", "c.svg", "--data", data];
            args.extend_from_slice(case.args);
            let out = analyze(dir.path(), &args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{} {data}: {err}", case.name);
            assert_eq!(err.lines().count(), 1, "{} {data}: {err}", case.name);
            assert!(err.starts_with(&format!("analyze: {data}")), "{err}");
            let left: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(
                left,
                ["dir.parquet"],
                "{} {data}: nothing written",
                case.name
            );
            assert_eq!(
                std::fs::read_dir(dir.path().join("dir.parquet"))
                    .unwrap()
                    .count(),
                0
            );
        }
    }
}
