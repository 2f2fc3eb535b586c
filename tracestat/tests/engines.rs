//! The events dataset (docs/tracestat.md#events) read by the engines that
//! scale out, as docs/sql.md shows them: DuckDB, polars and Dask (and
//! PySpark where a Java runtime is present) find the same per-rank,
//! per-category kernel counts and times, equal to the totals the traces
//! were built with (`common::ranks`); the Dask versions of the queries of
//! docs/sql.md give the rows of their SQL; the SQL runs unchanged in Spark.
//!
//! The engines are Python packages that scripts/test.sh installs (duckdb,
//! polars, `dask[dataframe]`, pyarrow; pyspark when `java` is there): a
//! missing one fails the test, saying how to install it. Without a Java
//! runtime the Spark test says so and does nothing else (Spark cannot run).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::{gen_files, loud, python_json, ranks, unavailable};
use crate::events::{doc_queries, export, DUCKDB_RUNNER};

const RANKS: i64 = 6;

/// The events dataset of [`RANKS`] generated ranks, in `dir/ev`.
fn known_dataset(dir: &Path) -> std::path::PathBuf {
    let files = ranks::write_ranks(&dir.join("run"), RANKS);
    let ev = dir.join("ev");
    let o = export(&files, &ev, &["-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    ev
}

/// `[rank, category, kernels, ns]` rows, as the engines print them.
fn known_sums() -> Value {
    ranks::known_category_sums(RANKS)
        .into_iter()
        .map(|(r, c, n, ns)| serde_json::json!([r, c, n, ns]))
        .collect()
}

const SUMS: &str = r#"
import json, sys
import dask.dataframe as dd
import duckdb
import polars as pl

d = sys.argv[1]
out = {}
out["duckdb"] = [list(r) for r in duckdb.connect().execute(f"""
    SELECT rank, category, count(*), sum(duration_ns)
    FROM read_parquet('{d}/*/*.parquet', hive_partitioning = true)
    WHERE category IS NOT NULL
    GROUP BY rank, category ORDER BY rank, category""").fetchall()]
sums = (
    pl.scan_parquet(f"{d}/*/*.parquet", hive_partitioning=True)
    .filter(pl.col("category").is_not_null())
    .group_by("rank", "category")
    .agg(pl.len().alias("kernels"), pl.col("duration_ns").sum().alias("ns"))
    .sort("rank", "category")
    .collect()
)
out["polars"] = [list(r) for r in sums.iter_rows()]
events = dd.read_parquet(d)
events["rank"] = events["rank"].astype("int64")
sums = (
    events[events.category.notnull()]
    .groupby(["rank", "category"])
    .duration_ns.agg(["count", "sum"])
    .compute()
    .sort_index()
)
out["dask"] = [[int(r), c, int(n), int(ns)] for (r, c), (n, ns) in zip(sums.index, sums.values)]
out["dask_partitions"] = events.npartitions
json.dump(out, sys.stdout)
"#;

#[test]
fn every_engine_reads_the_same_per_rank_category_sums() {
    let dir = tempfile::tempdir().unwrap();
    let ev = known_dataset(dir.path());
    let got = python_json(SUMS, &[ev.as_os_str()]);
    let known = known_sums();
    // 3 categories per rank: compute (the gemms), memory, communication.
    assert_eq!(known.as_array().unwrap().len(), 3 * RANKS as usize);
    for engine in ["duckdb", "polars", "dask"] {
        assert_eq!(got[engine], known, "{engine}");
    }
    // Dask read one partition per part file, that is per rank here.
    assert_eq!(got["dask_partitions"], RANKS);
}

// ---- the Dask blocks of docs/sql.md ----

/// The Dask blocks of docs/sql.md: `(name, code)` for every block marked
/// `<!-- dask: NAME -->`, in page order (`load` first).
fn dask_blocks() -> Vec<(String, String)> {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/sql.md"))
        .unwrap();
    let mut out = Vec::new();
    let mut rest = doc.as_str();
    while let Some(at) = rest.find("<!-- dask: ") {
        rest = &rest[at + "<!-- dask: ".len()..];
        let end = rest.find(" -->").unwrap();
        let name = rest[..end].to_string();
        let open = rest.find("```python\n").unwrap() + "```python\n".len();
        let close = open + rest[open..].find("```").unwrap();
        out.push((name, rest[open..close].to_string()));
        rest = &rest[close..];
    }
    out
}

/// Runs the blocks (JSON `[[name, code], ...]` in argv[1]) one after the
/// other in one namespace, and prints the DataFrame each query block
/// leaves under its name, as a list of rows.
const DASK_RUNNER: &str = r#"
import json, math, sys
import pandas as pd

def plain(v):
    if v is None or v is pd.NA:
        return None
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v

blocks = json.load(open(sys.argv[1]))
space = {}
out = {}
for name, code in blocks:
    exec(code, space)
    if name != "load":
        df = space[name]
        out[name] = [{k: plain(v) for k, v in row.items()} for row in df.to_dict("records")]
json.dump(out, sys.stdout)
"#;

/// The rows of two engines for one query are the same: the same columns,
/// integers and strings equal, floats equal up to rounding.
fn same_rows(got: &Value, want: &Value, what: &str) {
    let (g, w) = (got.as_array().unwrap(), want.as_array().unwrap());
    assert_eq!(g.len(), w.len(), "{what}: {got}\n{want}");
    assert!(!g.is_empty(), "{what}: no rows");
    for (i, (a, b)) in g.iter().zip(w).enumerate() {
        let (a, b) = (a.as_object().unwrap(), b.as_object().unwrap());
        let mut ka: Vec<&String> = a.keys().collect();
        let mut kb: Vec<&String> = b.keys().collect();
        ka.sort();
        kb.sort();
        assert_eq!(ka, kb, "{what}: columns");
        for (k, x) in a {
            let y = &b[k];
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => assert!(
                    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
                    "{what} row {i} {k}: {x} != {y}"
                ),
                _ => assert_eq!(x, y, "{what} row {i} {k}"),
            }
        }
    }
}

/// The DuckDB results of the SQL of docs/sql.md over the dataset `ev`.
fn sql_results(ev: &Path, scratch: &Path) -> Value {
    let dataset = format!("{}/", ev.display());
    let queries: Vec<(String, String)> = doc_queries()
        .into_iter()
        .map(|(n, q)| (n, q.replace("DIR/", &dataset)))
        .collect();
    let file = scratch.join("queries.json");
    std::fs::write(&file, serde_json::to_vec(&queries).unwrap()).unwrap();
    python_json(DUCKDB_RUNNER, &[file.as_os_str()])
}

#[test]
fn dask_versions_of_the_docs_queries_equal_the_sql() {
    let dir = tempfile::tempdir().unwrap();
    let ev = dir.path().join("ev");
    let o = export(&gen_files(), &ev, &["-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let blocks: Vec<(String, String)> = dask_blocks()
        .into_iter()
        .map(|(n, code)| (n, code.replace("\"DIR\"", &format!("{:?}", ev.display()))))
        .collect();
    let names: Vec<&str> = blocks.iter().map(|b| b.0.as_str()).collect();
    assert_eq!(
        names,
        ["load", "top_kernels", "busy", "idle_gaps", "collectives"]
    );
    let file = dir.path().join("blocks.json");
    std::fs::write(&file, serde_json::to_vec(&blocks).unwrap()).unwrap();
    let dask = python_json(DASK_RUNNER, &[file.as_os_str()]);
    let sql = sql_results(&ev, dir.path());
    for name in &names[1..] {
        same_rows(&dask[name], &sql[name], name);
    }
    // Touching and overlapping kernels are merged as the SQL does: the gap
    // counts are not those of a float comparison (docs/sql.md#loading).
    assert!(sql["idle_gaps"][0]["gaps"].as_i64().unwrap() > 10);
}

// ---- Spark ----

const SPARK: &str = r#"
import decimal, json, os, sys
# Loopback only: the driver and its executors are this one process.
os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
from pyspark.sql import SparkSession, functions as F

spark = (
    SparkSession.builder.master("local[2]")
    .appName("unitrace-tools tests")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.driver.host", "127.0.0.1")
    .config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.sql.shuffle.partitions", "4")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")

def plain(v):
    return float(v) if isinstance(v, decimal.Decimal) else v

known_dir, gen_dir, queries = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
out = {}
sums = (
    spark.read.parquet(known_dir)
    .where("category IS NOT NULL")
    .groupBy("rank", "category")
    .agg(F.count("*").alias("kernels"), F.sum("duration_ns").alias("ns"))
    .orderBy("rank", "category")
    .collect()
)
out["sums"] = [[r["rank"], r["category"], r["kernels"], r["ns"]] for r in sums]
spark.read.parquet(gen_dir).createOrReplaceTempView("events")
for name, sql in queries:
    if name == "view":
        continue  # DuckDB's view; Spark's is the temporary view above
    rows = spark.sql(sql.strip().rstrip(";")).collect()
    out[name] = [{k: plain(v) for k, v in r.asDict().items()} for r in rows]
spark.stop()
json.dump(out, sys.stdout)
"#;

/// Whether Spark can run here: a Java runtime, and pyspark (which
/// scripts/test.sh installs when there is one).
fn spark_available() -> bool {
    let java = Command::new("java").arg("-version").output();
    if !java.is_ok_and(|o| o.status.success()) {
        loud("SKIPPED: no Java runtime (`java -version` failed): Spark cannot run here (docs/sql.md#loading)");
        return false;
    }
    let py = Command::new("python3")
        .args(["-c", "import pyspark"])
        .output();
    if !py.is_ok_and(|o| o.status.success()) {
        unavailable("Java is here but pyspark is not: python3 -m pip install --user pyspark (scripts/test.sh does it)");
        return false;
    }
    true
}

#[test]
fn spark_reads_the_dataset_and_runs_the_sql_of_the_docs() {
    if !spark_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let known = known_dataset(dir.path());
    let ev = dir.path().join("gen-ev");
    let o = export(&gen_files(), &ev, &["-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let queries = dir.path().join("spark-queries.json");
    std::fs::write(&queries, serde_json::to_vec(&doc_queries()).unwrap()).unwrap();
    let args: [&OsStr; 3] = [known.as_os_str(), ev.as_os_str(), queries.as_os_str()];
    let spark = python_json(SPARK, &args);
    assert_eq!(spark["sums"], known_sums());
    let sql = sql_results(&ev, dir.path());
    for name in ["top_kernels", "busy", "idle_gaps", "collectives"] {
        same_rows(&spark[name], &sql[name], name);
    }
}
