//! Command line of `mergetrace` (docs/compatibility.md#mergetrace, plus the options beyond the
//! original described in the README).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "mergetrace",
    version,
    about = "Merge per-rank unitrace Chrome/Perfetto traces into one trace",
    long_about = "Merge per-rank unitrace Chrome/Perfetto traces into one trace, streaming \
                  (constant memory), events passed through byte for byte. Truncated inputs \
                  (a rank killed mid-write) are repaired in memory; inputs are never modified.",
    infer_long_args = true
)]
pub struct Args {
    /// Trace files to merge, in this order (events keep file order, then
    /// their order within the file).
    // Checked after parsing (see `parse_from_os`): `--stats TRACE` must
    // count as one input.
    #[arg(value_name = "TRACE")]
    pub inputs: Vec<PathBuf>,

    /// Merged trace to write.
    #[arg(
        short = 'o',
        long = "outputFile",
        visible_alias = "output",
        value_name = "OUT",
        default_value = "unitrace.all.json"
    )]
    pub output: PathBuf,

    /// Give each input its own pid namespace (pids and tids renumbered per
    /// input, flow ids made unique per input, processes labelled `rank N`
    /// when the file name carries the rank).
    #[arg(long)]
    pub remap_pids: bool,

    /// `start`: shift each input so that its first timestamp lines up with
    /// the earliest input's (ranks on nodes whose clocks differ).
    #[arg(long, value_enum, default_value_t = Align::None, value_name = "MODE")]
    pub align: Align,

    /// Keep only events whose name matches REGEX (metadata events are
    /// always kept; flow events are named `dep`: add `|^dep$` to keep
    /// them).
    #[arg(long, value_name = "REGEX")]
    pub filter: Option<String>,

    /// Find the traces in a `unitrace --result-dir DIR` tree (every
    /// `chrome_trace.json`, or `chrome_trace.pftrace` when there is no JSON),
    /// merged in rank order.
    #[arg(long, value_name = "DIR")]
    pub result_dir: Option<PathBuf>,

    /// Keep only these ranks: `--ranks 0 2` or `--ranks 0-3,7`; in this
    /// order with --result-dir. Without it, the rank of an input comes from
    /// its name (`APP.PID.RANK.json`, `rank_N.`) or its `RANK N` process name.
    #[arg(long, value_name = "RANK", num_args = 1..)]
    pub ranks: Vec<String>,

    /// Whether `-o` was given (the default name changes for .pftrace).
    #[arg(skip)]
    pub output_given: bool,

    /// Keep only events overlapping A:B, times since the start of the
    /// merged trace; bare numbers are seconds, or add a unit (ns, us, ms,
    /// s); either side may be empty (`:2s`, `1.5s:`).
    #[arg(long, value_name = "A:B", allow_hyphen_values = false)]
    pub time_window: Option<String>,

    /// Print per-rank GPU time, busy %, straggler check and top kernels on
    /// stdout; with FILE.csv also write per-rank and per-kernel rows there
    /// (FILE.parquet: the same rows as Parquet).
    // The plain `PathBuf` parser refuses the empty default-missing value, so
    // a bare `--stats` before another option or at the end failed.
    #[arg(
        long,
        value_name = "FILE.csv|FILE.parquet",
        num_args = 0..=1,
        default_missing_value = "",
        value_parser = clap::builder::TypedValueParser::map(
            clap::builder::OsStringValueParser::new(),
            PathBuf::from
        )
    )]
    pub stats: Option<PathBuf>,

    /// With --stats: group the device kernels by category with this
    /// compiled category schema (as written by `categorize`, e.g.
    /// schemas/LLaMA.json); kernels no rule matches count as `device`.
    #[arg(long, value_name = "X.json")]
    pub schema: Option<PathBuf>,

    /// A file that is not a valid trace is skipped with a warning (its
    /// complete events before the bad spot are kept) instead of failing the
    /// whole merge.
    #[arg(long)]
    pub skip_invalid: bool,

    /// Largest single event accepted, in MiB (bounds the memory used;
    /// 1 to 4096).
    #[arg(long, value_name = "MIB", default_value_t = 256, hide = true,
          value_parser = clap::value_parser!(u16).range(1..=4096))]
    pub max_event_mib: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Align {
    Start,
    None,
}

impl Args {
    /// Parses the command line. `--stats` takes an optional value, so in
    /// `--stats a.json b.json` clap would take `a.json` as the CSV: a value
    /// that does not end in `.csv` or `.parquet` is put back among the inputs, at its
    /// place on the command line.
    pub fn parse_from_os<I, T>(argv: I) -> Args
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let matches = Args::command().get_matches_from(argv);
        let mut args = match Args::from_arg_matches(&matches) {
            Ok(a) => a,
            Err(e) => e.exit(),
        };
        args.fix_stats_value(&matches);
        args.fix_ranks_values(&matches);
        args.output_given =
            matches.value_source("output") == Some(clap::parser::ValueSource::CommandLine);
        let usage_error = |msg: String| -> ! {
            Args::command()
                .error(clap::error::ErrorKind::ArgumentConflict, msg)
                .exit()
        };
        // The checks and texts of the newest mergetrace.py
        // (docs/compatibility.md#mergetrace-result-dir).
        if let Some(dir) = &args.result_dir {
            if !args.inputs.is_empty() {
                usage_error("Cannot use both input files and --result-dir".into());
            }
            if std::fs::symlink_metadata(dir).is_err() && !dir.exists() {
                usage_error(format!("Directory '{}' does not exist", dir.display()));
            }
            if !dir.is_dir() {
                usage_error(format!("'{}' is not a directory", dir.display()));
            }
        }
        if args.schema.is_some() && args.stats.is_none() {
            Args::command()
                .error(
                    clap::error::ErrorKind::MissingRequiredArgument,
                    "--schema groups the --stats report by kernel category: it needs --stats",
                )
                .exit();
        }
        if args.inputs.is_empty() && args.result_dir.is_none() {
            Args::command()
                .error(
                    clap::error::ErrorKind::MissingRequiredArgument,
                    "Must provide either input files or --result-dir",
                )
                .exit();
        }
        args
    }

    /// `--ranks` takes one or more values, so in `--ranks 0-3 a.json b.json`
    /// clap takes the traces as ranks: values that are not rank lists go
    /// back among the inputs, at their place on the command line.
    fn fix_ranks_values(&mut self, matches: &ArgMatches) {
        let is_rank = |v: &str| {
            !v.is_empty()
                && v.bytes()
                    .all(|b| b.is_ascii_digit() || b == b',' || b == b'-' || b == b' ')
        };
        let Some(first_bad) = self.ranks.iter().position(|v| !is_rank(v)) else {
            return;
        };
        if first_bad == 0 {
            // `--ranks x.json`: leave it to the rank parser's message.
            return;
        }
        let moved: Vec<PathBuf> = self.ranks.drain(first_bad..).map(PathBuf::from).collect();
        let at = matches.index_of("ranks").unwrap_or(0);
        let before = matches
            .indices_of("inputs")
            .map(|ix| ix.filter(|&i| i < at).count())
            .unwrap_or(0);
        let tail = self.inputs.split_off(before);
        self.inputs.extend(moved);
        self.inputs.extend(tail);
    }

    /// The `--ranks` values as ranks in the given order (`None`: all).
    pub fn rank_list(&self) -> Result<Option<Vec<u32>>, String> {
        if self.ranks.is_empty() {
            return Ok(None);
        }
        unitrace_core::result_dir::parse_rank_list(&self.ranks).map(Some)
    }

    fn fix_stats_value(&mut self, matches: &ArgMatches) {
        let Some(stats) = &self.stats else { return };
        if stats.as_os_str().is_empty() {
            return;
        }
        // A table is `.csv`, or `.parquet` (docs/formats.md#parquet-tables).
        let is_table = stats
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv") || e.eq_ignore_ascii_case("parquet"));
        if is_table {
            return;
        }
        let at = matches.index_of("stats").unwrap_or(0);
        let before = matches
            .indices_of("inputs")
            .map(|ix| ix.filter(|&i| i < at).count())
            .unwrap_or(0);
        let value = std::mem::take(self.stats.as_mut().expect("checked above"));
        self.inputs.insert(before, value);
    }

    pub fn stats_csv(&self) -> Option<&PathBuf> {
        self.stats.as_ref().filter(|p| !p.as_os_str().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_value_that_is_a_trace_goes_back_to_inputs() {
        let a = Args::parse_from_os(["m", "x.json", "--stats", "y.json", "z.json"]);
        assert_eq!(a.inputs, ["x.json", "y.json", "z.json"].map(PathBuf::from));
        assert_eq!(a.stats.as_deref(), Some(std::path::Path::new("")));
        let a = Args::parse_from_os(["m", "--stats", "s.csv", "x.json", "-o", "o.json"]);
        assert_eq!(a.stats_csv().unwrap(), &PathBuf::from("s.csv"));
        assert_eq!(a.inputs, [PathBuf::from("x.json")]);
        let a = Args::parse_from_os(["m", "--stats", "only.json"]);
        assert_eq!(a.inputs, [PathBuf::from("only.json")]);
        let a = Args::parse_from_os(["m", "--outputFile", "o.json", "x.json"]);
        assert_eq!(a.output, PathBuf::from("o.json"));
        let a = Args::parse_from_os(["m", "--out", "o.json", "x.json"]);
        assert_eq!(a.output, PathBuf::from("o.json"));
        assert!(a.stats.is_none());
        let a = Args::parse_from_os(["m", "--stats", "--schema", "c.json", "x.json"]);
        assert_eq!(a.schema.as_deref(), Some(std::path::Path::new("c.json")));
        assert_eq!(a.inputs, [PathBuf::from("x.json")]);
        // A bare `--stats` before another option or at the end.
        let a = Args::parse_from_os(["m", "--stats", "-o", "o.json", "x.json"]);
        assert_eq!(a.stats.as_deref(), Some(std::path::Path::new("")));
        assert_eq!(a.output, PathBuf::from("o.json"));
        let a = Args::parse_from_os(["m", "x.json", "--stats"]);
        assert_eq!(a.stats.as_deref(), Some(std::path::Path::new("")));
        assert_eq!(a.inputs, [PathBuf::from("x.json")]);
    }
}
