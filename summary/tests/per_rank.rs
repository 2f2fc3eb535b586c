//! The per-rank table and the coverage report.

use crate::{data, golden, run_ok};

#[test]
fn per_rank_csv_has_one_row_per_rank_and_marks_the_slowest() {
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("ranks.csv");
    let (out, _) = run_ok(
        &data("plain.tgz"),
        &["--per-rank", csv_path.to_str().unwrap()],
    );
    assert_eq!(out, golden("plain.orig.mean.json"), "stdout unchanged");
    let text = std::fs::read_to_string(&csv_path).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        &header[..5],
        ["rank", "pid", "member", "wallclock_ns", "device_total_ns"]
    );
    assert!(header.contains(&"matmul_time_ns".to_string()));
    assert!(header.contains(&"matmul_calls".to_string()));
    assert!(header.contains(&"allreduce_time_ns".to_string()));
    assert_eq!(header.last().unwrap(), "slowest_in");
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let ranks: Vec<&str> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(ranks, ["0", "1", "2", "3"]);
    // Each time column is the slowest on exactly one row.
    let matmul = header.iter().position(|h| h == "matmul_time_ns").unwrap();
    let max_row = (0..rows.len())
        .max_by_key(|&i| rows[i][matmul].parse::<i64>().unwrap())
        .unwrap();
    let marked: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i][header.len() - 1].contains("matmul_time_ns(+"))
        .collect();
    assert_eq!(marked, vec![max_row]);
    // Category sums over ranks divided by ranks give the mean of the summary
    // JSON (each rank has every matmul kernel once after merging).
    let sum: i64 = rows.iter().map(|r| r[matmul].parse::<i64>().unwrap()).sum();
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(sum as f64 / 4.0, json["matmul_time"].as_f64().unwrap());
}

#[test]
fn console_formats_report_ranks_coverage_and_unused_rules() {
    let (table, _) = run_ok(&data("plain.tgz"), &["--format", "table"]);
    assert!(table.starts_with("process"), "{table}");
    assert!(table.contains("rank 3"));
    assert!(table.contains("slowest vs median"));
    assert!(table.contains("fastest vs median"));
    assert!(table.contains("uncategorized: "));
    assert!(table.contains("rules that matched nothing: "));
    assert!(table.contains("[allreduce if starts with] Allreduce_small_kernel"));

    let (json, _) = run_ok(&data("plain.tgz"), &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["ranks"].as_array().unwrap().len(), 4);
    let share = v["uncategorized"]["device_time_share"].as_f64().unwrap();
    assert!(share > 0.0 && share < 1.0, "{share}");
    let top = v["uncategorized"]["top"].as_array().unwrap();
    assert!(!top.is_empty() && top.len() <= 10);
    assert!(v["slowest"]["wallclock_ns"]["vs_median_percent"].is_number());
    // The compute straggler waits least in the collectives: the rank slowest
    // in matmul is the fastest in allreduce.
    assert_eq!(
        v["slowest"]["matmul_time_ns"]["rank"],
        v["fastest"]["allreduce_time_ns"]["rank"]
    );
    assert!(v["unmatched_rules"].as_array().unwrap().len() > 10);

    let (csv_text, _) = run_ok(&data("plain.tgz"), &["--format", "csv"]);
    assert_eq!(csv_text.lines().count(), 5);
}

#[test]
fn default_category_share_is_noted_on_stderr() {
    let (_, stderr) = run_ok(&data("plain.tgz"), &[]);
    let notes: Vec<&str> = stderr.lines().collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(notes[0].starts_with("summary: note: "), "{stderr}");
    assert!(notes[0].contains("matched no rule"), "{stderr}");
}

/// `--format table` fits 100 columns (it was 164 here and 213 with more
/// categories): columns go into blocks that each repeat the process column,
/// long kernel names wrap, and no value is lost.
#[test]
fn table_fits_100_columns_and_keeps_every_value() {
    let (table, _) = run_ok(&data("plain.tgz"), &["--format", "table"]);
    for line in table.lines() {
        assert!(line.chars().count() <= 100, "{} wide: {line}", line.len());
    }
    // Every category column is there once, in some block.
    for col in [
        "wallclock ms",
        "device_total ms",
        "matmul ms",
        "attn ms",
        "allreduce ms",
        "comm ms",
    ] {
        assert_eq!(table.matches(col).count(), 1, "{col}\n{table}");
    }
    // Each block repeats the process column with every rank.
    let blocks = table.matches("\nprocess ").count() + usize::from(table.starts_with("process "));
    assert!(blocks >= 2, "{table}");
    assert_eq!(table.matches("\nrank 3 ").count(), blocks);
    // The CSV form has the same values: each rank's matmul time in ms.
    let (csv, _) = run_ok(&data("plain.tgz"), &["--format", "csv"]);
    let mut rdr = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    let matmul = header.iter().position(|h| h == "matmul_time_ns").unwrap();
    for row in rdr.records().map(Result::unwrap) {
        if row[matmul].is_empty() {
            continue;
        }
        let ms = format!("{:.3}", row[matmul].parse::<f64>().unwrap() / 1e6);
        assert!(table.contains(&ms), "{ms} missing");
    }
    // A long kernel name of the coverage report is wrapped, not cut: its
    // tail is on the continuation line.
    assert!(table.contains("xpu::xetla::hgemm_bias_res_res_caller<"));
    assert!(
        table.contains("\n      512, 8, 16, 16, 4, 1, 1, 3, true>"),
        "{table}"
    );
}

/// `--per-rank ranks.parquet` holds the rows of `--per-rank ranks.csv`,
/// typed (docs/formats.md#parquet-tables): integer ns and counts, not text.
#[test]
fn per_rank_parquet_holds_the_csv_rows_typed() {
    use unitrace_render::parquet::ColumnType;
    let dir = tempfile::tempdir().unwrap();
    let csv_path = dir.path().join("ranks.csv");
    let pq_path = dir.path().join("ranks.parquet");
    run_ok(
        &data("plain.tgz"),
        &["--per-rank", csv_path.to_str().unwrap()],
    );
    run_ok(
        &data("plain.tgz"),
        &["--per-rank", pq_path.to_str().unwrap()],
    );
    let csv = std::fs::read(&csv_path).unwrap();
    let pq = std::fs::read(&pq_path).unwrap();
    unitrace_render::table::same_as_csv(&csv, pq.clone()).unwrap();
    let schema = unitrace_render::table::parquet_schema(pq).unwrap();
    let ty = |name: &str| schema.columns[schema.index_of(name).unwrap()].ty;
    assert_eq!(ty("rank"), ColumnType::Int64);
    assert_eq!(ty("matmul_time_ns"), ColumnType::Int64);
    assert_eq!(ty("matmul_calls"), ColumnType::Int64);
    assert_eq!(ty("member"), ColumnType::Utf8);
    assert_eq!(ty("slowest_in"), ColumnType::Utf8);
}
