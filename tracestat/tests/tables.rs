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
    assert_eq!(header[1], "0.0000", "{header:?}");
    let starts: Vec<f64> = header[1..].iter().map(|h| h.parse().unwrap()).collect();
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
