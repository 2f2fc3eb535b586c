//! The Parquet writer choice, measured: the project's writer
//! (render/src/parquet.rs on the `parquet` crate) against polars, writing
//! the rows of `tracestat --events` (docs/tracestat.md#events). Driven by
//! benches/parquet_choice.sh; figures and the decision in
//! docs/benchmarks.md#parquet-writer-polars-vs-parquet.
//!
//! ```text
//! parquet_choice prepare DATASET DUMP        rows of DATASET's Parquet files -> column dump   [arrow-parquet]
//! parquet_choice write DUMP OUT [options]    time this build's writer on the dump's rows
//! parquet_choice check DATASET OUT...        same rows and column checksums?                   [arrow-parquet]
//!
//! write options: --json-bytes N (size of the JSON the rows came from, for MB/s)
//!                --repeat R (default 3) --row-group-rows N (default 65536)
//!                --zstd-level L (default 1) --parallel (polars: columns on its thread pool)
//! ```
//!
//! A build holds one writer (feature `arrow-parquet`, the default, or
//! `polars`), so that each build's time and size are that writer's; the
//! polars build has no Parquet reader of ours, hence the dump, which both
//! `write` runs load, so that both start from the same memory columns.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

// The polars build only loads the dump and writes: the reading and
// checking half of `columns` is the arrow-parquet build's.
#[cfg_attr(not(feature = "arrow-parquet"), allow(dead_code))]
mod columns;
#[cfg(feature = "arrow-parquet")]
mod read;
#[cfg(feature = "arrow-parquet")]
mod write_parquet;
#[cfg(feature = "polars")]
mod write_polars;

// The project's writer itself, not a copy: the file says it depends only on
// std, bytes and parquet for this reason.
#[cfg(feature = "arrow-parquet")]
#[allow(dead_code)]
#[path = "../../../render/src/parquet.rs"]
mod project_parquet;

use columns::Table;

const TOOL: &str = "parquet_choice";

/// What both writers are asked to do the same way.
pub struct WriteSettings {
    pub row_group_rows: usize,
    pub zstd_level: i32,
    /// polars only: serialise columns in parallel (its default).
    pub parallel: bool,
}

fn writer_name() -> &'static str {
    if cfg!(feature = "polars") {
        "polars"
    } else {
        "arrow-parquet"
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            ExitCode::from(1)
        }
    }
}

fn usage() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "usage: parquet_choice prepare DATASET DUMP | write DUMP OUT [--json-bytes N] \
         [--repeat R] [--row-group-rows N] [--zstd-level L] [--parallel] | check DATASET OUT...",
    )
}

fn run(args: &[String]) -> io::Result<ExitCode> {
    match args.first().map(String::as_str) {
        Some("prepare") if args.len() == 3 => prepare(Path::new(&args[1]), Path::new(&args[2])),
        Some("write") if args.len() >= 3 => write(&args[1..]),
        Some("check") if args.len() >= 3 => check(Path::new(&args[1]), &args[2..]),
        _ => Err(usage()),
    }
}

#[cfg(feature = "arrow-parquet")]
fn prepare(dataset: &Path, dump: &Path) -> io::Result<ExitCode> {
    let t = Instant::now();
    let table = read::read_table(dataset)?;
    table.dump(dump)?;
    println!(
        "prepared {} rows x {} columns ({:.1} MB of values) from {} in {:.2} s",
        table.rows(),
        table.columns.len(),
        table.value_bytes() as f64 / 1e6,
        dataset.display(),
        t.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "arrow-parquet"))]
fn prepare(_: &Path, _: &Path) -> io::Result<ExitCode> {
    Err(io::Error::other(
        "prepare needs the arrow-parquet build (the Parquet reader)",
    ))
}

#[cfg(feature = "arrow-parquet")]
fn check(dataset: &Path, outputs: &[String]) -> io::Result<ExitCode> {
    let source = read::read_table(dataset)?;
    let mut same = true;
    println!(
        "{:<36} {:>9}  column checksums (FNV-1a of values and nulls)",
        "file", "rows"
    );
    let line = |label: &str, t: &Table| {
        let sums: Vec<String> = t
            .columns
            .iter()
            .map(|c| format!("{}={:016x}", c.name, c.checksum()))
            .collect();
        println!("{label:<36} {:>9}  {}", t.rows(), sums.join(" "));
    };
    line("source dataset", &source);
    for out in outputs {
        let path = Path::new(out);
        let table = read::read_table(path)?;
        line(out, &table);
        let names = |t: &Table| t.columns.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        if table.rows() != source.rows() {
            println!(
                "DIFFERENT: {out} has {} rows, the source {}",
                table.rows(),
                source.rows()
            );
            same = false;
        } else if names(&table) != names(&source) {
            println!("DIFFERENT: {out} has columns {:?}", names(&table));
            same = false;
        } else {
            for (a, b) in source.columns.iter().zip(&table.columns) {
                if a.checksum() != b.checksum() {
                    println!("DIFFERENT: {out} column {}", a.name);
                    same = false;
                }
            }
        }
        print!("{}", read::describe(path)?);
    }
    if same {
        println!(
            "same rows: {} rows, every column's checksum equal in all {} outputs",
            source.rows(),
            outputs.len()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(1))
    }
}

#[cfg(not(feature = "arrow-parquet"))]
fn check(_: &Path, _: &[String]) -> io::Result<ExitCode> {
    Err(io::Error::other(
        "check needs the arrow-parquet build (the Parquet reader)",
    ))
}

fn number<T: std::str::FromStr>(flag: &str, v: Option<&String>) -> io::Result<T> {
    v.and_then(|v| v.parse().ok()).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{flag} needs a number"),
        )
    })
}

fn write(args: &[String]) -> io::Result<ExitCode> {
    let dump = Path::new(&args[0]);
    let out = Path::new(&args[1]);
    let mut json_bytes = 0u64;
    let mut repeat = 3usize;
    let mut settings = WriteSettings {
        row_group_rows: 64 * 1024,
        zstd_level: 1,
        parallel: false,
    };
    let mut rest = args[2..].iter();
    while let Some(flag) = rest.next() {
        match flag.as_str() {
            "--json-bytes" => json_bytes = number(flag, rest.next())?,
            "--repeat" => repeat = number::<usize>(flag, rest.next())?.max(1),
            "--row-group-rows" => settings.row_group_rows = number(flag, rest.next())?,
            "--zstd-level" => settings.zstd_level = number(flag, rest.next())?,
            "--parallel" => settings.parallel = true,
            _ => return Err(usage()),
        }
    }
    let table = Table::load(dump)?;
    let rows = table.rows();
    let rss_loaded = proc_status_kb("VmRSS");
    println!(
        "{}: {rows} rows x {} columns loaded ({:.1} MB of values), RSS {:.1} MB; \
         row groups of {} rows, zstd level {}{}",
        writer_name(),
        table.columns.len(),
        table.value_bytes() as f64 / 1e6,
        rss_loaded as f64 / 1024.0,
        settings.row_group_rows,
        settings.zstd_level,
        if settings.parallel {
            ", columns in parallel"
        } else {
            ""
        }
    );
    let mut best: Option<(f64, f64)> = None;
    for run in 1..=repeat {
        let cpu0 = cpu_seconds();
        let t = Instant::now();
        let file = BufWriter::with_capacity(1 << 16, File::create(out)?);
        let file = write_with_this_build(&table, file, &settings)?;
        file.into_inner().map_err(|e| e.into_error())?;
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        let size = std::fs::metadata(out)?.len();
        println!(
            "  run {run}: {secs:.3} s wall, {cpu:.2} s CPU, {:.0} rows/s, {:.1} MB/s of JSON, {:.1} MB of JSON per CPU s, output {:.2} MB",
            rows as f64 / secs,
            json_bytes as f64 / 1e6 / secs,
            json_bytes as f64 / 1e6 / cpu.max(0.01),
            size as f64 / 1e6
        );
        if best.is_none_or(|(b, _)| secs < b) {
            best = Some((secs, cpu));
        }
    }
    let (secs, cpu) = best.unwrap_or((0.0, 0.0));
    let hwm = proc_status_kb("VmHWM");
    println!(
        "RESULT writer={} rows={rows} best_s={secs:.3} cpu_s={cpu:.2} rows_per_s={:.0} json_mb_per_s={:.1} \
         json_mb_per_cpu_s={:.1} output_mb={:.2} rss_loaded_mb={:.1} peak_rss_mb={:.1} writer_rss_mb={:.1}",
        writer_name(),
        rows as f64 / secs.max(1e-9),
        json_bytes as f64 / 1e6 / secs.max(1e-9),
        json_bytes as f64 / 1e6 / cpu.max(0.01),
        std::fs::metadata(out)?.len() as f64 / 1e6,
        rss_loaded as f64 / 1024.0,
        hwm as f64 / 1024.0,
        hwm.saturating_sub(rss_loaded) as f64 / 1024.0
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "polars")]
fn write_with_this_build<W: Write + Send>(
    table: &Table,
    out: W,
    settings: &WriteSettings,
) -> io::Result<W> {
    write_polars::write(table, out, settings)
}

#[cfg(all(feature = "arrow-parquet", not(feature = "polars")))]
fn write_with_this_build<W: Write + Send>(
    table: &Table,
    out: W,
    settings: &WriteSettings,
) -> io::Result<W> {
    write_parquet::write(table, out, settings)
}

#[cfg(not(any(feature = "arrow-parquet", feature = "polars")))]
fn write_with_this_build<W: Write + Send>(_: &Table, _: W, _: &WriteSettings) -> io::Result<W> {
    Err(io::Error::other(
        "built without a writer: --features arrow-parquet or polars",
    ))
}

/// A field of /proc/self/status in kB (0 where there is none).
fn proc_status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field)?.strip_prefix(':').map(str::to_owned))
        })
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// User + system CPU seconds of the process, all threads (from
/// /proc/self/stat, in clock ticks of 1/100 s as on Linux).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // The fields after the command name, which may hold spaces, in "()".
    let Some((_, rest)) = stat.rsplit_once(')') else {
        return 0.0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line; `fields[0]` is
    // field 3 (the state).
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<u64>().ok())
        .sum();
    ticks as f64 / 100.0
}
