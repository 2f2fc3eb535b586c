//! The `summary` tool: per-category time and calls from a tarball of unitrace
//! text summaries (scripts.md 4), plus the per-rank table and the coverage
//! report of what no schema rule matched.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use unitrace_core::atomic::{ensure_not_input, write_atomic};
use unitrace_core::category_schema::{
    write_python_string, CategorySchema, RuleId, DEFAULT_COMM_CATEGORY, DEFAULT_DEVICE_CATEGORY,
};
use unitrace_core::cli::warn;
use unitrace_core::summary_tarball::{for_each_member_streaming, Member};
use unitrace_core::summary_text::{
    parse_summary, MemberSummary, NameIndex, NameTotals, SummaryParser, L0_BACKEND, WALLCLOCK,
};
use unitrace_core::InputError;

use crate::pyagg::{Aggregator, PyNum, Samples};
use crate::ranks::{self, ProcessId, ProcessRow, RankTable};

const TOOL: &str = "summary";

#[derive(Parser, Debug, Clone)]
#[command(
    name = "summary",
    version,
    about = "Per-category device and CCL time from a tarball of unitrace summaries",
    infer_long_args = true
)]
pub struct SummaryArgs {
    /// Tar archive (gzip, plain; bzip2/xz/zstd via the system tools) of
    /// unitrace -h/-d/-r text logs.
    #[arg(long = "tarfile", visible_alias = "input", value_name = "TAR")]
    pub tarfile: PathBuf,

    /// Compiled category schema written by `categorize`.
    #[arg(long = "schema", value_name = "JSON")]
    pub schema: PathBuf,

    /// How the values of one name from different files are combined.
    #[arg(long = "aggregator", value_enum, default_value = "mean")]
    pub aggregator: Aggregator,

    /// Write nothing when the result is empty (default).
    #[arg(long = "skip-empty", overrides_with = "no_skip_empty")]
    pub skip_empty: bool,

    /// Write `{}` when the result is empty.
    #[arg(long = "no-skip-empty", overrides_with = "skip_empty")]
    pub no_skip_empty: bool,

    /// Output JSON file; stdout when absent (and no --format).
    #[arg(long = "json", visible_alias = "output", value_name = "OUT")]
    pub json: Option<PathBuf>,

    /// Per-rank table: one row per rank/process, time and calls per
    /// category; CSV, or JSON when the name ends in `.json`.
    #[arg(long = "per-rank", value_name = "FILE")]
    pub per_rank: Option<PathBuf>,

    /// Print the per-rank table and the coverage report on stdout in this
    /// form (the summary JSON then goes only to --output).
    #[arg(long = "format", value_enum)]
    pub format: Option<ConsoleFormat>,

    /// Worker threads parsing members (default: cores - 1, at least 1).
    #[arg(long = "jobs", short = 'j')]
    pub jobs: Option<usize>,

    /// -v warnings and the coverage report, -vv each member, -vvv every
    /// name that got the default category.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConsoleFormat {
    Csv,
    Json,
    Table,
}

/// What a worker makes of one member.
enum Parsed {
    /// A summary, with the line of the member's first byte that is not
    /// valid UTF-8 (read as U+FFFD).
    Summary(Box<MemberSummary>, Option<u64>),
    /// A side file of a `--result-dir` tree (trace JSON, metric CSV, …).
    SideFile,
    Binary,
    Bad(u64, String),
}

/// Result-dir files that hold no timing summary (formats 0, d.7).
fn is_side_file(path: &str) -> bool {
    let base = path.rsplit('/').next().unwrap_or(path);
    let lower = base.to_ascii_lowercase();
    lower.ends_with(".json")
        || lower.ends_with(".csv")
        || matches!(
            base,
            "call_logging.txt" | "device_timeline.txt" | "run_config.json"
        )
}

fn parse_member(member: &Member) -> Parsed {
    if is_side_file(&member.path) {
        return Parsed::SideFile;
    }
    // A NUL byte in the first block means a binary file (summary.py aborts
    // with a decode error, scripts.md 4.5 #7).
    let head = &member.data[..member.data.len().min(8192)];
    if memchr::memchr(0, head).is_some() {
        return Parsed::Binary;
    }
    // Validating is cheaper than the lossy conversion; only damaged text
    // pays for the replacement characters.
    let (text, non_utf8) = match std::str::from_utf8(&member.data) {
        Ok(t) => (std::borrow::Cow::Borrowed(t), None),
        Err(e) => {
            let before = &member.data[..e.valid_up_to()];
            let line = memchr::memchr_iter(b'\n', before).count() as u64 + 1;
            (String::from_utf8_lossy(&member.data), Some(line))
        }
    };
    match parse_summary(&text) {
        Ok(s) => Parsed::Summary(Box::new(s), non_utf8),
        Err(e) => Parsed::Bad(e.line, e.problem),
    }
}

/// The warnings of one parsed member, each `LINE: problem` (once per kind,
/// at the first occurrence, with the count): the member is still used.
fn member_warnings(summary: &MemberSummary, non_utf8: Option<u64>) -> Vec<String> {
    let times = |n: u64| {
        if n == 1 {
            "once".to_string()
        } else {
            format!("{n} times")
        }
    };
    let mut out = Vec::new();
    if let Some(line) = non_utf8 {
        out.push(format!(
            "{line}: text is not valid UTF-8 (a kernel name in another encoding?); invalid bytes are read as U+FFFD"
        ));
    }
    if let Some(f) = summary.short_rows {
        out.push(format!(
            "{}: table row has fewer fields than its header (log cut mid-row?); the table ends there and its remaining rows are not counted ({} in this member)",
            f.first_line,
            times(f.count)
        ));
    }
    if let Some(f) = summary.negative_times {
        out.push(format!(
            "{}: negative \"Time (ns)\" is summed as read ({} in this member)",
            f.first_line,
            times(f.count)
        ));
    }
    out
}

/// Members above this size are parsed while they stream out of the archive
/// instead of being read whole (bounded memory for huge single-rank logs).
const STREAM_ABOVE: u64 = unitrace_core::summary_tarball::IN_FLIGHT_BYTES / 2;

/// [`parse_member`] for a member read line by line from the archive.
fn parse_member_stream(path: &str, reader: &mut dyn BufRead) -> Option<Parsed> {
    if is_side_file(path) {
        return Some(Parsed::SideFile);
    }
    let head = reader.fill_buf().ok()?;
    if memchr::memchr(0, &head[..head.len().min(8192)]).is_some() {
        return Some(Parsed::Binary);
    }
    let mut parser = SummaryParser::new();
    let mut non_utf8 = None;
    let mut buf = Vec::with_capacity(1 << 12);
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            // The archive layer reports the truncation with the member name.
            Err(_) => return Some(Parsed::SideFile),
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        }
        let fed = match std::str::from_utf8(&buf) {
            Ok(line) => parser.feed(line),
            Err(_) => {
                non_utf8.get_or_insert(parser.lines() + 1);
                parser.feed(&String::from_utf8_lossy(&buf))
            }
        };
        if let Err(e) = fed {
            return Some(Parsed::Bad(e.line, e.problem));
        }
    }
    Some(match parser.finish() {
        Ok(s) => Parsed::Summary(Box::new(s), non_utf8),
        Err(e) => Parsed::Bad(e.line, e.problem),
    })
}

/// One name's samples across files.
struct NameStats {
    name: String,
    time: Samples,
    calls: Samples,
    rule: Option<RuleId>,
}

#[derive(Default)]
struct Bucket {
    names: Vec<NameStats>,
    index: NameIndex,
}

/// Interned category names in first-use order.
#[derive(Default)]
pub struct Categories {
    pub names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Categories {
    pub fn id(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.index.insert(name.to_string(), self.names.len());
        self.names.push(name.to_string());
        self.names.len() - 1
    }
}

struct Aggregation<'a> {
    schema: &'a CategorySchema,
    keep_all: bool,
    buckets: [Bucket; 2],
    rule_hits: Vec<u64>,
    categories: Categories,
    processes: Vec<ProcessRow>,
    process_index: HashMap<String, usize>,
}

const DEFAULT_CATEGORY: [&str; 2] = [DEFAULT_DEVICE_CATEGORY, DEFAULT_COMM_CATEGORY];

impl<'a> Aggregation<'a> {
    fn fold(&mut self, member: &str, summary: &MemberSummary) {
        let key = ranks::process_key(member);
        let row_index = match self.process_index.get(&key) {
            Some(&i) => i,
            None => {
                let id = ProcessId::from_member_path(member);
                self.processes.push(ProcessRow::new(key.clone(), id));
                self.process_index.insert(key, self.processes.len() - 1);
                self.processes.len() - 1
            }
        };
        let buckets: [&NameTotals; 2] = [&summary.device, &summary.comm];
        for (b, totals) in buckets.into_iter().enumerate() {
            for entry in totals.iter() {
                let Bucket { names, index } = &mut self.buckets[b];
                let next = names.len() as u32;
                let found = index.find_or_insert(entry.hash, entry.name, next, |i| {
                    names[i as usize].name.as_str()
                });
                let i = match found {
                    Ok(i) => i as usize,
                    Err(i) => {
                        let rule = self.schema.classify(entry.name);
                        if let Some(r) = rule {
                            self.rule_hits[r as usize] += 1;
                        }
                        names.push(NameStats {
                            name: entry.name.to_string(),
                            time: Samples::new(),
                            calls: Samples::new(),
                            rule,
                        });
                        i as usize
                    }
                };
                let bucket = &mut self.buckets[b];
                let stats = &mut bucket.names[i];
                stats.time.push(entry.time_ns, self.keep_all);
                stats.calls.push(entry.calls, self.keep_all);
                if entry.name != WALLCLOCK && entry.name != L0_BACKEND {
                    let category = match stats.rule {
                        Some(r) => self.schema.category_of(r),
                        None => DEFAULT_CATEGORY[b],
                    };
                    let cat = self.categories.id(category);
                    self.processes[row_index].add(cat, entry.time_ns, entry.calls);
                }
            }
        }
        self.processes[row_index].absorb(member, summary);
    }
}

/// The uncategorised share of device time and its biggest names.
pub struct Coverage {
    pub default_category: &'static str,
    pub kernel_time: f64,
    pub default_time: f64,
    pub default_names: usize,
    pub top: Vec<(String, f64)>,
    pub unmatched_rules: Vec<(String, String, String)>,
    pub rules_total: usize,
}

pub fn run(args: &SummaryArgs) -> Result<ExitCode> {
    let mut outputs: Vec<&Path> = Vec::new();
    if let Some(p) = &args.json {
        outputs.push(p);
    }
    if let Some(p) = &args.per_rank {
        outputs.push(p);
    }
    for out in &outputs {
        ensure_not_input(out, &[&args.tarfile, &args.schema])?;
    }
    let schema_bytes = std::fs::read(&args.schema).map_err(|e| InputError::io(&args.schema, &e))?;
    let schema = CategorySchema::from_json_bytes(&args.schema, &schema_bytes)?;

    let mut agg = Aggregation {
        schema: &schema,
        keep_all: args.aggregator == Aggregator::Median,
        buckets: [Bucket::default(), Bucket::default()],
        rule_hits: vec![0; schema.rules.len()],
        categories: Categories::default(),
        processes: Vec::new(),
        process_index: HashMap::new(),
    };
    let workers = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get().saturating_sub(1))
            .unwrap_or(1)
            .clamp(1, 8)
    });
    let tar = &args.tarfile;
    let verbose = args.verbose;
    let mut summaries = 0usize;
    let stats = for_each_member_streaming(
        tar,
        workers,
        STREAM_ABOVE,
        parse_member,
        parse_member_stream,
        |member, parsed| {
            let at = |problem: String| InputError::at_file(tar, format!("{member}: {problem}"));
            match parsed {
                Parsed::Summary(s, non_utf8) => {
                    if !s.has_summary {
                        return Err(at(
                        "no summary section (no \"API Timing Summary\", \"Device Timing Summary\" \
                         or CCL block): run unitrace with -h/-d/-r, or did this rank crash?"
                            .to_string(),
                    ));
                    }
                    if verbose >= 2 {
                        eprintln!("{TOOL}: processing {member}");
                    }
                    if verbose >= 1 {
                        for note in &s.notes {
                            warn(TOOL, format!("{}: {member}: {note}", tar.display()));
                        }
                    }
                    for warning in member_warnings(&s, non_utf8) {
                        warn(TOOL, format!("{}: {member}:{warning}", tar.display()));
                    }
                    summaries += 1;
                    agg.fold(member, &s);
                }
                Parsed::SideFile => {
                    if verbose >= 2 {
                        eprintln!("{TOOL}: skipping {member} (not a text summary)");
                    }
                }
                Parsed::Binary => warn(
                    TOOL,
                    format!("{}: {member}: binary member skipped", tar.display()),
                ),
                Parsed::Bad(line, problem) => {
                    return Err(InputError::at_file(
                        tar,
                        format!("{member}:{line}: {problem}"),
                    ));
                }
            }
            Ok(())
        },
    )?;
    if summaries == 0 {
        let what = if stats.members == 0 {
            "archive holds no files".to_string()
        } else {
            format!(
                "none of the {} files is a unitrace text summary",
                stats.members
            )
        };
        return Err(InputError::at_file(tar, what).into());
    }

    let (output, coverage) = finish_aggregation(&mut agg, args.aggregator, verbose);

    // Summary JSON (scripts.md 4.3).
    let skip_empty = !args.no_skip_empty;
    if !output.is_empty() || !skip_empty {
        let text = render_output(&output);
        match &args.json {
            Some(path) => write_atomic(path, text.as_bytes())
                .map_err(|e| InputError::at_file(path, format!("cannot write: {e}")))?,
            None if args.format.is_none() => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())?;
                out.flush()?;
            }
            None => {}
        }
    }

    let table = RankTable::build(
        &agg.processes,
        &agg.categories,
        &output_category_order(&output),
    );
    if let Some(path) = &args.per_rank {
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let text = if is_json {
            ranks::render_json(&table, &coverage)
        } else {
            ranks::render_csv(&table)
        };
        write_atomic(path, text.as_bytes())
            .map_err(|e| InputError::at_file(path, format!("cannot write: {e}")))?;
    }
    if let Some(format) = args.format {
        let text = match format {
            ConsoleFormat::Csv => ranks::render_csv(&table),
            ConsoleFormat::Json => ranks::render_json(&table, &coverage),
            ConsoleFormat::Table => ranks::render_table(&table, &coverage),
        };
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
    } else {
        report_coverage(&coverage, verbose);
    }
    Ok(ExitCode::SUCCESS)
}

/// Categories in output-key order (`x_time` keys), for the table columns.
fn output_category_order(output: &[(String, PyNum)]) -> Vec<String> {
    output
        .iter()
        .filter_map(|(k, _)| k.strip_suffix("_time").map(str::to_string))
        .collect()
}

/// Categorises and aggregates (scripts.md 4.2): device bucket then CCL
/// bucket, names in first-seen order, `time` then `calls`.
fn finish_aggregation(
    agg: &mut Aggregation<'_>,
    aggregator: Aggregator,
    verbose: u8,
) -> (Vec<(String, PyNum)>, Coverage) {
    let mut output: Vec<(String, PyNum)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut kernel_time = 0.0;
    let mut default_time = 0.0;
    let mut default_names: Vec<(String, f64)> = Vec::new();
    for (b, bucket) in agg.buckets.iter_mut().enumerate() {
        for stats in &mut bucket.names {
            let category = match stats.rule {
                Some(r) => agg.schema.category_of(r).to_string(),
                None => {
                    if verbose >= 3 {
                        eprintln!("{TOOL}: U: {}", stats.name);
                    }
                    DEFAULT_CATEGORY[b].to_string()
                }
            };
            // summary.py skips a name whose category is the empty string
            // (`if ( category := ... ):` is false).
            if category.is_empty() {
                continue;
            }
            for (label, samples) in [("time", &mut stats.time), ("calls", &mut stats.calls)] {
                let value = samples.aggregate(aggregator);
                let key = format!("{category}_{label}");
                match index.get(&key) {
                    Some(&i) => output[i].1 = output[i].1.py_add(value),
                    None => {
                        index.insert(key.clone(), output.len());
                        output.push((key, value));
                    }
                }
                if b == 0 && label == "time" && stats.name != WALLCLOCK && stats.name != L0_BACKEND
                {
                    let t = value.as_f64();
                    kernel_time += t;
                    if stats.rule.is_none() {
                        default_time += t;
                        default_names.push((stats.name.clone(), t));
                    }
                }
            }
        }
    }
    default_names.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let count = default_names.len();
    default_names.truncate(10);
    let unmatched_rules = agg
        .schema
        .rules
        .iter()
        .zip(&agg.rule_hits)
        .filter(|(_, hits)| **hits == 0)
        .map(|(r, _)| {
            (
                r.kind.describe().to_string(),
                r.tag.clone(),
                r.category.clone(),
            )
        })
        .collect();
    let coverage = Coverage {
        default_category: DEFAULT_CATEGORY[0],
        kernel_time,
        default_time,
        default_names: count,
        top: default_names,
        unmatched_rules,
        rules_total: agg.schema.rules.len(),
    };
    (output, coverage)
}

/// `json.dump(output, f, indent=2)`.
fn render_output(output: &[(String, PyNum)]) -> String {
    if output.is_empty() {
        return "{}".to_string();
    }
    let mut s = String::from("{");
    for (i, (k, v)) in output.iter().enumerate() {
        s.push_str(if i == 0 { "\n  " } else { ",\n  " });
        write_python_string(&mut s, k);
        s.push_str(": ");
        s.push_str(&v.to_string());
    }
    s.push_str("\n}");
    s
}

/// One line on stderr when device time fell into the default category (the
/// silent "other" of every categoriser); the full report with -v.
fn report_coverage(coverage: &Coverage, verbose: u8) {
    if coverage.default_time > 0.0 && coverage.kernel_time > 0.0 {
        let share = 100.0 * coverage.default_time / coverage.kernel_time;
        let top = coverage
            .top
            .iter()
            .take(3)
            .map(|(n, t)| {
                format!(
                    "{} ({:.1}%)",
                    shorten(n, 60),
                    100.0 * t / coverage.kernel_time
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        eprintln!(
            "{TOOL}: note: {share:.1}% of device time ({} kernel names) matched no rule and went to \"{}\"; biggest: {top}; see --format table",
            coverage.default_names, coverage.default_category
        );
    }
    if verbose >= 1 {
        for line in ranks::coverage_lines(coverage) {
            eprintln!("{TOOL}: {line}");
        }
    }
}

pub fn shorten(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_string();
    }
    let head: String = name.chars().take(max - 1).collect();
    format!("{head}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "\n=== Device Timing Summary ===\n\n  Total Execution Time (ns): 99\r\n\n== L0 Backend ==\n\n Kernel, Calls, Time (ns)\n\"k\", 2, 30\n\"k\", 1, 5\n\n************\n\n";

    fn summary_of(p: Parsed) -> MemberSummary {
        match p {
            Parsed::Summary(s, _) => *s,
            _ => panic!("not a summary"),
        }
    }

    #[test]
    fn streamed_and_whole_members_parse_alike() {
        let whole = parse_member(&Member {
            index: 0,
            path: "output.1.0.txt".into(),
            data: LOG.as_bytes().to_vec(),
        });
        let mut reader = std::io::BufReader::with_capacity(7, LOG.as_bytes());
        let streamed = parse_member_stream("output.1.0.txt", &mut reader).unwrap();
        let (a, b) = (summary_of(whole), summary_of(streamed));
        assert_eq!(a, b);
        assert_eq!(a.device.len(), 2);
        assert!(matches!(
            parse_member_stream("x.bin", &mut &b"ab\0cd"[..]),
            Some(Parsed::Binary)
        ));
        assert!(matches!(
            parse_member_stream("res/p.1/chrome_trace.json", &mut &b"{}"[..]),
            Some(Parsed::SideFile)
        ));
    }

    #[test]
    fn first_non_utf8_line_is_found_whole_and_streamed() {
        // A Latin-1 `é` in the kernel name of line 10 of LOG.
        let data: Vec<u8> = LOG
            .replace("\"k\", 1, 5", "\"k\u{1}\", 1, 5")
            .bytes()
            .map(|b| if b == 1 { 0xe9 } else { b })
            .collect();
        let whole = parse_member(&Member {
            index: 0,
            path: "output.1.0.txt".into(),
            data: data.clone(),
        });
        let mut reader = std::io::BufReader::with_capacity(7, &data[..]);
        let streamed = parse_member_stream("output.1.0.txt", &mut reader).unwrap();
        for parsed in [whole, streamed] {
            match parsed {
                Parsed::Summary(_, line) => assert_eq!(line, Some(10)),
                _ => panic!("not a summary"),
            }
        }
    }
}
