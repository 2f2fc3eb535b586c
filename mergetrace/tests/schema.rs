//! `--stats --schema X.json`: device time grouped by kernel category, on the
//! hand-written traces of testdata/trace/categories (numbers checked by
//! hand, see its README), plus the bad-schema and usage errors.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/trace")
        .join(rel)
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn category_traces() -> Vec<PathBuf> {
    vec![
        data("categories/python.300.0.json"),
        data("categories/python.400.1.json"),
    ]
}

fn mergetrace(cwd: &Path, args: &[&str], inputs: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mergetrace"))
        .current_dir(cwd)
        .args(args)
        .args(inputs)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn stats_grouped_by_category() {
    let dir = tempfile::tempdir().unwrap();
    let schema = data("categories/schema.json");
    let o = mergetrace(
        dir.path(),
        &[
            "-o",
            "m.json",
            "--stats",
            "stats.csv",
            "--schema",
            path_str(&schema),
        ],
        &category_traces(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");

    // Rank 0: gemm 10+30 (two shapes of one kernel: one row, as in
    // tracestat, docs/mergetrace.md#statistics), allreduce 20 (name
    // with spaces), copy 15 (equals-to after the `[65536]` size is cut),
    // mystery 25 unmatched -> device; 100 us in all.
    // Rank 1: gemm 50+70, attention 30 (equals-to with spaces ignored),
    // sync 20 (ends-with after the shape is cut), other 10 and mystery 20
    // unmatched -> device; 200 us. attention and device tie at 30: by name.
    let table = String::from_utf8(o.stdout).unwrap();
    let expected = "\
device time by category (kernels no rule matches count as \"device\"):
  rank     total_ms share_%     count     mean_us      max_us  category
     0        0.040   40.00         2      20.000      30.000  gemm
     0        0.025   25.00         1      25.000      25.000  device
     0        0.020   20.00         1      20.000      20.000  allreduce
     0        0.015   15.00         1      15.000      15.000  copy
     1        0.120   60.00         2      60.000      70.000  gemm
     1        0.030   15.00         1      30.000      30.000  attention
     1        0.030   15.00         2      15.000      20.000  device
     1        0.020   10.00         1      20.000      20.000  sync
default category \"device\": 18.33% of device time (all ranks); no rule matched 3 launches \
of 2 kernel names (18.33% of device time)
top kernels (all ranks, by device time):
";
    assert!(table.contains(expected), "{table}");
    assert!(
        table.starts_with("GPU time per rank (2 ranks, median 0.150 ms):\n"),
        "{table}"
    );

    let csv = fs::read_to_string(dir.path().join("stats.csv")).unwrap();
    let expected_csv = "\
row,rank,file,kernel,category,count,total_us,mean_us,max_us,gpu_share_pct,wall_us,gpu_busy_pct,vs_median_pct,host_range,host_range_share_pct
rank,0,python.300.0.json,,,5,100.000,,,,135.000,74.07,-33.3,,
category,0,python.300.0.json,,gemm,2,40.000,20.000,30.000,40.00,,,,,
category,0,python.300.0.json,,device,1,25.000,25.000,25.000,25.00,,,,,
category,0,python.300.0.json,,allreduce,1,20.000,20.000,20.000,20.00,,,,,
category,0,python.300.0.json,,copy,1,15.000,15.000,15.000,15.00,,,,,
kernel,0,python.300.0.json,gemm_kernel,gemm,2,40.000,20.000,30.000,40.00,,,,(none),100.00
kernel,0,python.300.0.json,mystery_kernel,device,1,25.000,25.000,25.000,25.00,,,,(none),100.00
kernel,0,python.300.0.json,\"Allreduce_small_kernel<half, 4>\",allreduce,1,20.000,20.000,20.000,20.00,,,,(none),100.00
kernel,0,python.300.0.json,zeCommandListAppendMemoryCopy(M2D),copy,1,15.000,15.000,15.000,15.00,,,,(none),100.00
rank,1,python.400.1.json,,,6,200.000,,,,250.000,80.00,33.3,,
category,1,python.400.1.json,,gemm,2,120.000,60.000,70.000,60.00,,,,,
category,1,python.400.1.json,,attention,1,30.000,30.000,30.000,15.00,,,,,
category,1,python.400.1.json,,device,2,30.000,15.000,20.000,15.00,,,,,
category,1,python.400.1.json,,sync,1,20.000,20.000,20.000,10.00,,,,,
kernel,1,python.400.1.json,gemm_kernel,gemm,2,120.000,60.000,70.000,60.00,,,,(none),100.00
kernel,1,python.400.1.json,\"fmha<half, 64>\",attention,1,30.000,30.000,30.000,15.00,,,,(none),100.00
kernel,1,python.400.1.json,AllreduceKernel_GlobalSync,sync,1,20.000,20.000,20.000,10.00,,,,(none),100.00
kernel,1,python.400.1.json,mystery_kernel,device,1,20.000,20.000,20.000,10.00,,,,(none),100.00
kernel,1,python.400.1.json,other_kernel,device,1,10.000,10.000,10.000,5.00,,,,(none),100.00
";
    assert_eq!(csv, expected_csv);

    // The schema changes the report only: the merged trace is the same.
    let o = mergetrace(dir.path(), &["-o", "plain.json"], &category_traces());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        fs::read(dir.path().join("m.json")).unwrap(),
        fs::read(dir.path().join("plain.json")).unwrap()
    );

    // Without --schema the CSV has the same columns, the `category` column
    // holding tracestat's built-in class, and no category rows.
    let o = mergetrace(
        dir.path(),
        &["-o", "m2.json", "--stats", "plain.csv"],
        &category_traces(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let plain = fs::read_to_string(dir.path().join("plain.csv")).unwrap();
    assert!(plain.starts_with("row,rank,file,kernel,category,count,total_us,"));
    assert!(plain.contains("\nrank,0,python.300.0.json,,,5,100.000,,,,135.000,74.07,-33.3,,\n"));
    // Without a schema: the built-in classes (docs/tracestat.md#classification).
    for row in [
        "kernel,0,python.300.0.json,gemm_kernel,compute,2,40.000,20.000,30.000,40.00,,,,(none),100.00\n",
        "kernel,0,python.300.0.json,\"Allreduce_small_kernel<half, 4>\",communication,1,20.000,",
        "kernel,0,python.300.0.json,zeCommandListAppendMemoryCopy(M2D),memory,1,15.000,",
    ] {
        assert!(plain.contains(row), "{row}\n{plain}");
    }
    assert!(!plain.contains("\ncategory,"));
    assert!(!String::from_utf8(o.stdout).unwrap().contains("by category"));
}

/// The real LLaMA schema on the generated two-rank traces: every launch
/// lands in exactly one category and the shares of a rank add up to 100%.
#[test]
fn llama_schema_accounts_for_every_launch() {
    let dir = tempfile::tempdir().unwrap();
    let schema = repo("schemas/LLaMA.json");
    let inputs = vec![
        data("two/python.100003.0.json"),
        data("two/python.100063.1.json"),
    ];
    let o = mergetrace(
        dir.path(),
        &[
            "-o",
            "m.json",
            "--stats",
            "s.csv",
            "--schema",
            path_str(&schema),
        ],
        &inputs,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = fs::read_to_string(dir.path().join("s.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| split_csv(l)).collect();
    for rank in ["0", "1"] {
        let of = |kind: &str| {
            rows.iter()
                .filter(move |r| r[0] == kind && r[1] == rank)
                .collect::<Vec<_>>()
        };
        let launches: u64 = of("rank")[0][5].parse().unwrap();
        let gpu_us: f64 = of("rank")[0][6].parse().unwrap();
        let cats = of("category");
        assert!(cats.len() >= 5, "{csv}");
        let counted: u64 = cats.iter().map(|r| r[5].parse::<u64>().unwrap()).sum();
        assert_eq!(counted, launches);
        let total: f64 = cats.iter().map(|r| r[6].parse::<f64>().unwrap()).sum();
        assert!((total - gpu_us).abs() < 0.01, "{total} vs {gpu_us}");
        // Every kernel has a category; each category's count is the sum of
        // its kernels' counts.
        for c in &cats {
            let of_cat: u64 = of("kernel")
                .iter()
                .filter(|k| k[4] == c[4])
                .map(|k| k[5].parse::<u64>().unwrap())
                .sum();
            assert_eq!(of_cat.to_string(), c[5], "{csv}");
        }
        assert!(of("kernel").iter().all(|k| !k[4].is_empty()));
    }
    // Known names of the LLaMA schema (kernel rows and the lookup alike
    // without the launch shape).
    assert!(
        rows.iter()
            .any(|r| r[0] == "kernel" && r[3] == "gemm_kernel" && r[4] == "matmul"),
        "{csv}"
    );
    assert!(
        rows.iter().any(|r| r[0] == "kernel"
            && r[3].starts_with("Allreduce_small_kernel<")
            && r[4] == "allreduce"),
        "{csv}"
    );
}

/// Splits one CSV line whose quoted fields hold no quotes.
fn split_csv(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(line[start..i].trim_matches('"'));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(line[start..].trim_matches('"'));
    out
}

#[test]
fn schema_without_stats_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let schema = data("categories/schema.json");
    let o = mergetrace(
        dir.path(),
        &["-o", "m.json", "--schema", path_str(&schema)],
        &category_traces(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains("--schema groups the --stats report by kernel category: it needs --stats"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path().join("m.json").exists());
}

#[test]
fn bad_schema_is_a_one_line_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 5] = [
        (
            "notjson.json",
            b"{\"direct\": ",
            "notjson.json: not valid JSON: ",
        ),
        ("empty.json", b"", "empty.json: not valid JSON: "),
        (
            "array.json",
            b"[1, 2]",
            "array.json: not a compiled category schema: top level is not an object",
        ),
        (
            "nodirect.json",
            b"{\"ignore_spaces\": true, \"reverse\": {}}",
            "nodirect.json: not a compiled category schema: no \"direct\" key",
        ),
        (
            "badregex.json",
            b"{\"ignore_spaces\": false, \"direct\": {}, \"reverse\": {}, \
              \"matches\": [{\"regex\": \"(\", \"category\": \"x\"}]}",
            "badregex.json: not a compiled category schema: a \"matches\" regex is invalid",
        ),
    ];
    for (name, bytes, message) in cases {
        fs::write(dir.path().join(name), bytes).unwrap();
        let o = mergetrace(
            dir.path(),
            &["-o", "m.json", "--stats", "s.csv", "--schema", name],
            &category_traces(),
        );
        assert_eq!(o.status.code(), Some(1), "{name}");
        let err = stderr(&o);
        assert!(err.starts_with("mergetrace: "), "{err}");
        assert!(err.contains(message), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(o.stdout.is_empty());
        assert!(!dir.path().join("m.json").exists(), "{name}");
        assert!(!dir.path().join("s.csv").exists(), "{name}");
        assert_eq!(fs::read(dir.path().join(name)).unwrap(), bytes);
    }

    let o = mergetrace(
        dir.path(),
        &["-o", "m.json", "--stats", "--schema", "missing.json"],
        &category_traces(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "mergetrace: missing.json: no such file\n");
    assert!(!dir.path().join("m.json").exists());

    // The merged trace may not overwrite the schema.
    let copy = dir.path().join("schema.json");
    fs::copy(data("categories/schema.json"), &copy).unwrap();
    let before = fs::read(&copy).unwrap();
    let o = mergetrace(
        dir.path(),
        &["-o", "schema.json", "--stats", "--schema", "schema.json"],
        &category_traces(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("refusing to overwrite"),
        "{}",
        stderr(&o)
    );
    assert_eq!(fs::read(&copy).unwrap(), before);
}

/// `--stats s.parquet` holds the rows of `--stats s.csv`, typed
/// (docs/formats.md#parquet-tables), with and without `--schema`.
#[test]
fn stats_parquet_holds_the_csv_rows_typed() {
    let schema = data("categories/schema.json");
    for with_schema in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        for name in ["s.csv", "s.parquet"] {
            let mut args = vec!["-o", "m.json", "--stats", name];
            if with_schema {
                args.extend(["--schema", path_str(&schema)]);
            }
            let o = mergetrace(dir.path(), &args, &category_traces());
            assert!(o.status.success(), "{}", stderr(&o));
        }
        let csv = fs::read(dir.path().join("s.csv")).unwrap();
        let pq = fs::read(dir.path().join("s.parquet")).unwrap();
        unitrace_render::table::same_as_csv(&csv, pq.clone()).unwrap();
        let got = unitrace_render::table::parquet_schema(pq).unwrap();
        assert_eq!(got, mergetrace::stats::stats_schema());
        let count = got.index_of("count").unwrap();
        assert_eq!(
            got.columns[count].ty,
            unitrace_render::parquet::ColumnType::Int64
        );
    }
}
