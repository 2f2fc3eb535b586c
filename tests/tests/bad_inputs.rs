//! Every tool on every file of the shared bad-input corpus
//! (`tests/bad_inputs/`) that is relevant to it, plus generated inputs too
//! big to commit (huge lines) and truncations of the valid files at every
//! section boundary. The contract checked for each run is described in
//! `unitrace_system_tests` (src/lib.rs): no panic, one error line
//! `TOOL: FILE[:LINE]: problem` (or, for inputs a tool may use, warnings
//! only), no output file after a failure, inputs unchanged.
//!
//! Corpus layout: `tests/bad_inputs/<kind>/<case>`, one folder per input
//! kind; `valid/` holds the good files that truncations start from and that
//! tools needing several inputs get for their other inputs. Every corpus
//! file must be listed in [`CASES`], so the table and the folder cannot
//! drift apart.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use unitrace_system_tests::{check, repo_root, tool_binary, Expect, Invocation};

/// Kinds of input, one corpus folder each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    MetricCsv,
    StallCsv,
    OptionFile,
    DeviceConfig,
    TraceJson,
    IniSchema,
    JsonSchema,
    /// One unitrace text log; run as a member of a tarball next to a
    /// valid member.
    SummaryText,
    Tarball,
    /// One `.asm` file; run as the only file of a shader dump folder.
    ShaderDump,
}

const KINDS: &[Kind] = &[
    Kind::MetricCsv,
    Kind::StallCsv,
    Kind::OptionFile,
    Kind::DeviceConfig,
    Kind::TraceJson,
    Kind::IniSchema,
    Kind::JsonSchema,
    Kind::SummaryText,
    Kind::Tarball,
    Kind::ShaderDump,
];

impl Kind {
    fn folder(self) -> &'static str {
        match self {
            Kind::MetricCsv => "metric_csv",
            Kind::StallCsv => "stall_csv",
            Kind::OptionFile => "option_file",
            Kind::DeviceConfig => "device_config",
            Kind::TraceJson => "trace_json",
            Kind::IniSchema => "ini_schema",
            Kind::JsonSchema => "json_schema",
            Kind::SummaryText => "summary_text",
            Kind::Tarball => "tarball",
            Kind::ShaderDump => "shader_dump",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Kind::MetricCsv | Kind::StallCsv => "csv",
            Kind::OptionFile => "txt",
            Kind::DeviceConfig | Kind::TraceJson | Kind::JsonSchema => "json",
            Kind::IniSchema => "ini",
            Kind::SummaryText => "txt",
            Kind::Tarball => "tgz",
            Kind::ShaderDump => "asm",
        }
    }
}

/// The corpus: `(kind folder / file, what every tool must do with it)`.
/// Per-tool exceptions are in [`OVERRIDES`].
const CASES: &[(&str, Expect)] = &[
    // --- metric CSVs (docs/formats.md#metric-csv) ---
    ("metric_csv/empty.csv", Expect::Fail(None)),
    // A PNG header: NUL bytes, no line structure.
    ("metric_csv/binary.csv", Expect::Fail(None)),
    // UTF-16 with BOM (an editor's "Unicode" save): no `Kernel,` header.
    ("metric_csv/utf16.csv", Expect::Fail(None)),
    // A kernel name in Latin-1: kept with U+FFFD, with a warning (the
    // roofline warns that it is missing from the other profile).
    ("metric_csv/latin1_kernel.csv", Expect::Warn),
    // CRLF line endings; line 6 has 5 of 8 fields: the line number must be
    // counted the same way as with LF.
    ("metric_csv/crlf_missing_fields.csv", Expect::Fail(Some(6))),
    ("metric_csv/missing_fields.csv", Expect::Fail(Some(5))),
    ("metric_csv/extra_fields.csv", Expect::Fail(Some(5))),
    // Header naming `GpuTime[ns]` twice.
    ("metric_csv/duplicate_columns.csv", Expect::Fail(Some(4))),
    // Header line repeated (old main logs do this before every instance,
    // so it is a separator, not an error).
    (
        "metric_csv/duplicate_header.csv",
        Expect::Accept("a repeated header separates instances (old main logs)"),
    ),
    // GpuTime 1e999 (inf), a 26-digit byte count, FP64 count 1e400.
    ("metric_csv/numbers_out_of_range.csv", Expect::Fail(Some(5))),
    // GpuTime NaN, frequency nan (both "missing", as pandas reads them),
    // L3 bytes inf, FP32 count -inf.
    ("metric_csv/nan_inf.csv", Expect::Fail(Some(5))),
    // GpuTime -5000.
    ("metric_csv/negative_duration.csv", Expect::Fail(Some(5))),
    // GpuTime `ten`, FP32 count `7e`.
    ("metric_csv/not_a_number.csv", Expect::Fail(Some(5))),
    // Last row cut in the middle (profiler killed).
    ("metric_csv/truncated_mid_row.csv", Expect::Fail(Some(5))),
    ("metric_csv/banner_without_header.csv", Expect::Fail(None)),
    ("metric_csv/unclosed_quote.csv", Expect::Fail(Some(5))),
    ("metric_csv/trace_json.csv", Expect::Fail(None)),
    (
        "metric_csv/header_without_metrics.csv",
        Expect::Fail(Some(1)),
    ),
    // A stall header where metrics are expected.
    ("metric_csv/stall_header_only.csv", Expect::Fail(None)),
    // A kernel name holding ESC [31m, BEL and the C1 CSI: escaped on every
    // line a tool prints (docs/robustness.md#messages), kept in files.
    (
        "metric_csv/control_bytes_kernel.csv",
        Expect::Accept("control bytes of a name are escaped where it is printed"),
    ),
    // --- stall CSVs (docs/formats.md#stall-csv) ---
    ("stall_csv/empty.csv", Expect::Fail(None)),
    ("stall_csv/binary.csv", Expect::Fail(None)),
    ("stall_csv/latin1_kernel.csv", Expect::Warn),
    ("stall_csv/crlf_missing_fields.csv", Expect::Fail(Some(6))),
    ("stall_csv/bad_ip.csv", Expect::Fail(Some(5))),
    ("stall_csv/ip_out_of_range.csv", Expect::Fail(Some(5))),
    ("stall_csv/negative_count.csv", Expect::Fail(Some(5))),
    ("stall_csv/count_out_of_range.csv", Expect::Fail(Some(5))),
    ("stall_csv/nan_inf.csv", Expect::Fail(Some(5))),
    ("stall_csv/duplicate_columns.csv", Expect::Fail(Some(4))),
    ("stall_csv/truncated_mid_row.csv", Expect::Fail(Some(6))),
    // --- option files (`-f FILE`, docs/formats.md#option-file) ---
    ("option_file/unclosed_quote.txt", Expect::Fail(None)),
    ("option_file/trailing_backslash.txt", Expect::Fail(None)),
    (
        "option_file/empty.txt",
        Expect::Accept("an empty option file adds no option"),
    ),
    (
        "option_file/crlf.txt",
        Expect::Accept("CR is whitespace to shlex: CRLF files split like LF files"),
    ),
    // Binary bytes split into words that are not options.
    ("option_file/binary.txt", Expect::Fail(None)),
    // clap reports unknown options in its own multi-line usage format
    // (exit 2), like argparse does.
    ("option_file/unknown_option.txt", Expect::Usage),
    ("option_file/bad_number.txt", Expect::Usage),
    // --- device configurations of roofline (docs/formats.md#device-config) ---
    ("device_config/empty.json", Expect::Fail(None)),
    ("device_config/binary.json", Expect::Fail(None)),
    ("device_config/utf16.json", Expect::Fail(None)),
    ("device_config/syntax_error.json", Expect::Fail(None)),
    ("device_config/truncated.json", Expect::Fail(None)),
    ("device_config/missing_peak.json", Expect::Fail(None)),
    ("device_config/negative_bandwidth.json", Expect::Fail(None)),
    ("device_config/number_out_of_range.json", Expect::Fail(None)),
    ("device_config/string_peak.json", Expect::Fail(None)),
    ("device_config/zero_peak.json", Expect::Fail(None)),
    // JSON leaves duplicate names undefined; the last one wins, as with
    // Python's json module that reads the original's configs.
    (
        "device_config/duplicate_key.json",
        Expect::Accept("the last of duplicate JSON names wins, as in Python"),
    ),
    // --- Chrome/Perfetto traces (docs/formats.md#trace-json) ---
    ("trace_json/empty.json", Expect::Warn),
    ("trace_json/binary.json", Expect::Fail(None)),
    ("trace_json/csv_instead.json", Expect::Fail(None)),
    ("trace_json/utf16.json", Expect::Fail(None)),
    ("trace_json/truncated_mid_event.json", Expect::Warn),
    ("trace_json/truncated_after_event.json", Expect::Warn),
    ("trace_json/header_only.json", Expect::Warn),
    (
        "trace_json/syntax_error_in_event.json",
        Expect::Fail(Some(5)),
    ),
    ("trace_json/event_not_object.json", Expect::Fail(Some(4))),
    ("trace_json/no_trace_events.json", Expect::Warn),
    (
        "trace_json/trace_events_not_array.json",
        Expect::Fail(Some(1)),
    ),
    ("trace_json/invalid_utf8.json", Expect::Fail(Some(4))),
    (
        "trace_json/crlf.json",
        Expect::Accept("CRLF is JSON whitespace"),
    ),
    (
        "trace_json/bom.json",
        Expect::Accept("a UTF-8 BOM is skipped"),
    ),
    ("trace_json/nan_ts.json", Expect::Fail(Some(4))),
    // Valid JSON with impossible times: statistics leave the event out
    // with a warning (see OVERRIDES for the plain merge).
    ("trace_json/ts_out_of_range.json", Expect::Warn),
    ("trace_json/negative_duration.json", Expect::Warn),
    (
        "trace_json/duplicate_keys.json",
        Expect::Accept("the last of duplicate JSON names wins, as in Python"),
    ),
    // Data after the closing `}`: ignored with a warning.
    ("trace_json/trailing_garbage.json", Expect::Warn),
    ("trace_json/deep_nesting.json", Expect::Fail(Some(4))),
    // Names with ESC, BEL and C1 CSI (JSON escapes): escaped when printed.
    (
        "trace_json/control_bytes_name.json",
        Expect::Accept("control bytes of a name are escaped where it is printed"),
    ),
    // A PyTorch profiler (Kineto) trace, blank-led, with a syntax error in
    // an event (docs/formats.md#kineto-json).
    ("trace_json/kineto_syntax_error.json", Expect::Fail(Some(9))),
    // gzip (told by content, whatever the name) of a CSV.
    ("trace_json/gzip_csv.json", Expect::Fail(None)),
    // A gzipped Kineto trace cut in its gzip stream (writer killed): read
    // as a cut trace, the complete events kept.
    ("trace_json/kineto_gzip_cut.json", Expect::Warn),
    // gzip of nothing: read as an empty file is.
    ("trace_json/gzip_empty.json", Expect::Warn),
    // A complete gzip member of a valid trace (its CRC checked), then bytes
    // that are no gzip member: the trace is read whole, the bytes ignored
    // with one warning saying what they are, as text after a JSON trace's
    // end is (docs/robustness.md#gzip).
    ("trace_json/gzip_trailing_garbage.json", Expect::Warn),
    // A Kineto kernel at ts 1e300 with a negative duration: left out as
    // implausible, with a warning (docs/tracestat.md#implausible-events).
    ("trace_json/kineto_times_out_of_range.json", Expect::Warn),
    ("device_config/crlf_nan.csv", Expect::Fail(None)),
    ("device_config/inf_bandwidth.csv", Expect::Fail(None)),
    ("device_config/missing_row.csv", Expect::Fail(None)),
    ("device_config/missing_value.csv", Expect::Fail(None)),
    ("device_config/duplicate_row.csv", Expect::Fail(None)),
    // --- categorize INI schemas (docs/formats.md#category-ini) ---
    ("ini_schema/empty.ini", Expect::Fail(None)),
    ("ini_schema/binary.ini", Expect::Fail(None)),
    ("ini_schema/utf16.ini", Expect::Fail(None)),
    ("ini_schema/tag_before_section.ini", Expect::Fail(Some(1))),
    ("ini_schema/unclosed_section.ini", Expect::Fail(Some(1))),
    (
        "ini_schema/indented_continuation.ini",
        Expect::Fail(Some(3)),
    ),
    ("ini_schema/no_tags.ini", Expect::Fail(None)),
    ("ini_schema/bad_regex.ini", Expect::Fail(Some(2))),
    ("ini_schema/unknown_condition.ini", Expect::Warn),
    ("ini_schema/duplicate_section.ini", Expect::Warn),
    (
        "ini_schema/crlf.ini",
        Expect::Accept("CRLF lines read like LF lines"),
    ),
    ("ini_schema/latin1.ini", Expect::Fail(None)),
    // --- compiled JSON schemas read by summary ---
    ("json_schema/empty.json", Expect::Fail(None)),
    ("json_schema/binary.json", Expect::Fail(None)),
    ("json_schema/utf16.json", Expect::Fail(None)),
    ("json_schema/syntax_error.json", Expect::Fail(Some(1))),
    ("json_schema/truncated.json", Expect::Fail(None)),
    ("json_schema/not_an_object.json", Expect::Fail(None)),
    ("json_schema/wrong_types.json", Expect::Fail(None)),
    ("json_schema/nan.json", Expect::Fail(None)),
    ("json_schema/deep_nesting.json", Expect::Fail(None)),
    // --- unitrace text logs, as tarball members (docs/formats.md#summary-text) ---
    ("summary_text/empty.txt", Expect::Fail(None)),
    ("summary_text/binary.txt", Expect::Warn),
    ("summary_text/utf16.txt", Expect::Warn),
    ("summary_text/truncated_mid_row.txt", Expect::Fail(None)),
    ("summary_text/missing_columns.txt", Expect::Fail(None)),
    ("summary_text/not_a_number.txt", Expect::Fail(None)),
    ("summary_text/number_out_of_range.txt", Expect::Fail(None)),
    ("summary_text/negative_time.txt", Expect::Fail(None)),
    ("summary_text/nan_time.txt", Expect::Fail(None)),
    (
        "summary_text/crlf.txt",
        Expect::Accept("CRLF lines read like LF lines"),
    ),
    ("summary_text/latin1_kernel.txt", Expect::Warn),
    ("summary_text/duplicate_header.txt", Expect::Fail(None)),
    // A kernel name with ESC, BEL and C1 CSI (summary's `note:` line names it).
    (
        "summary_text/control_bytes_kernel.txt",
        Expect::Accept("control bytes of a name are escaped where it is printed"),
    ),
    // --- tarballs (docs/formats.md#summary-tarball) ---
    ("tarball/empty.tgz", Expect::Fail(None)),
    ("tarball/binary.tgz", Expect::Fail(None)),
    ("tarball/csv_instead.tgz", Expect::Fail(None)),
    ("tarball/truncated_gzip.tgz", Expect::Fail(None)),
    ("tarball/gzip_of_text.tgz", Expect::Fail(None)),
    ("tarball/plain_tar_truncated.tar", Expect::Fail(None)),
    ("tarball/only_directory.tgz", Expect::Fail(None)),
    ("tarball/only_symlink.tgz", Expect::Fail(None)),
    ("tarball/empty_member.tgz", Expect::Fail(None)),
    // 64 KB that inflate to a 64 MiB member of NUL bytes: a binary member,
    // skipped with a warning without reading it whole; then no summary.
    ("tarball/zero_bomb.tgz", Expect::Fail(None)),
    // 147 KB that inflate to a 48 MiB log (a valid summary, then filler
    // lines): parsed while it streams, in bounded memory
    // (docs/robustness.md#bounds).
    (
        "tarball/text_bomb.tgz",
        Expect::Accept("a member larger than the in-memory bound is parsed as it streams"),
    ),
    // --- IGC shader dumps (docs/formats.md#shader-dump), one .asm in a dump folder ---
    ("shader_dump/empty.asm", Expect::Warn),
    ("shader_dump/binary.asm", Expect::Warn),
    ("shader_dump/no_kernel_line.asm", Expect::Warn),
    ("shader_dump/truncated.asm", Expect::Warn),
    (
        "shader_dump/crlf.asm",
        Expect::Accept("CRLF lines read like LF lines"),
    ),
    (
        "shader_dump/latin1.asm",
        Expect::Accept("non-UTF-8 comment text is kept lossily"),
    ),
    (
        "shader_dump/not_annotated.asm",
        Expect::Accept("addresses are computed in memory"),
    ),
    ("shader_dump/bad_addresses.asm", Expect::Warn),
    ("shader_dump/duplicate_addresses.asm", Expect::Warn),
];

/// `(mode, corpus file, expectation)` where a tool legitimately differs
/// from the corpus default, with the reason.
const OVERRIDES: &[(&str, &str, Expect)] = &[
    // The listing prints names only: values are never parsed.
    (
        "analyze -l",
        "metric_csv/numbers_out_of_range.csv",
        Expect::Accept("-l lists names; it never parses metric values"),
    ),
    (
        "analyze -l",
        "metric_csv/nan_inf.csv",
        Expect::Accept("-l lists names; it never parses metric values"),
    ),
    (
        "analyze -l",
        "metric_csv/negative_duration.csv",
        Expect::Accept("-l lists names; it never parses metric values"),
    ),
    (
        "analyze -l",
        "metric_csv/not_a_number.csv",
        Expect::Accept("-l lists names; it never parses metric values"),
    ),
    (
        "analyze -l",
        "metric_csv/stall_header_only.csv",
        Expect::Accept("-l lists stall files too"),
    ),
    (
        "analyze -l",
        "stall_csv/bad_ip.csv",
        Expect::Accept("-l lists kernel names; it never parses stall rows"),
    ),
    (
        "analyze -l",
        "stall_csv/ip_out_of_range.csv",
        Expect::Accept("-l lists kernel names; it never parses stall rows"),
    ),
    (
        "analyze -l",
        "stall_csv/negative_count.csv",
        Expect::Accept("-l lists kernel names; it never parses stall rows"),
    ),
    (
        "analyze -l",
        "stall_csv/count_out_of_range.csv",
        Expect::Accept("-l lists kernel names; it never parses stall rows"),
    ),
    (
        "analyze -l",
        "stall_csv/nan_inf.csv",
        Expect::Accept("-l lists kernel names; it never parses stall rows"),
    ),
    // uniview refuses what it cannot serve as a trace (uniview.py's checks).
    ("uniview", "trace_json/empty.json", Expect::Fail(None)),
    (
        "uniview",
        "trace_json/no_trace_events.json",
        Expect::Fail(None),
    ),
    // tracestat reports on what the trace holds: a trace without a
    // traceEvents array is no trace to report on (docs/tracestat.md).
    (
        "tracestat",
        "trace_json/no_trace_events.json",
        Expect::Fail(None),
    ),
    ("tracestat", "trace_json/empty.json", Expect::Fail(None)),
    // Cut right after `"traceEvents":[`: no event to report on, refused
    // as an empty file is (docs/tracestat.md#inputs); mergetrace skips it.
    (
        "tracestat",
        "trace_json/header_only.json",
        Expect::Fail(None),
    ),
    (
        "compare traces",
        "trace_json/header_only.json",
        Expect::Fail(None),
    ),
    (
        "tracestat",
        "trace_json/gzip_empty.json",
        Expect::Fail(None),
    ),
    ("uniview", "trace_json/gzip_empty.json", Expect::Fail(None)),
    // compare refuses a side with host events but no device work
    // (docs/compare.md#inputs): these hold no device command, or only one
    // left out as implausible.
    (
        "compare traces",
        "trace_json/truncated_after_event.json",
        Expect::Fail(None),
    ),
    (
        "compare traces",
        "trace_json/ts_out_of_range.json",
        Expect::Fail(None),
    ),
    (
        "compare traces",
        "trace_json/negative_duration.json",
        Expect::Fail(None),
    ),
    (
        "compare traces",
        "trace_json/duplicate_keys.json",
        Expect::Fail(None),
    ),
    (
        "compare traces",
        "trace_json/kineto_times_out_of_range.json",
        Expect::Fail(None),
    ),
    // A plain merge copies events byte for byte and never reads `ts` or
    // `dur` (only --stats, --align, --time-window do).
    (
        "mergetrace",
        "trace_json/ts_out_of_range.json",
        Expect::Accept("a plain merge passes events through unread"),
    ),
    (
        "mergetrace",
        "trace_json/negative_duration.json",
        Expect::Accept("a plain merge passes events through unread"),
    ),
    (
        "mergetrace",
        "trace_json/kineto_times_out_of_range.json",
        Expect::Accept("a plain merge passes events through unread"),
    ),
    // Charts draw one device section (-d, default 0) and follow the
    // header's kind, as the original does.
    // `analyze charts` on stall_header_only.csv: the stall mode is chosen
    // from the header and a stall section without rows is an error
    // (docs/robustness.md#stall-csvs): the default Fail applies.
    // Charts draw values as read, like the original's matplotlib (NaN is
    // a gap, inf is not drawn, a GpuTime[ns] <= 0 gives a meaningless -b
    // throughput), but warn once per file with the first line and a count;
    // a non-UTF-8 kernel name is shown with U+FFFD with the warning `-l`
    // prints.
    ("analyze charts", "metric_csv/nan_inf.csv", Expect::Warn),
    (
        "analyze charts",
        "metric_csv/numbers_out_of_range.csv",
        Expect::Warn,
    ),
    (
        "analyze charts",
        "metric_csv/negative_duration.csv",
        Expect::Warn,
    ),
    // summary keeps these members usable (docs/compatibility.md#summary-2: a short row
    // ends its table) and warns once per member and kind: the short row
    // (dropped, with the rest of its table), a negative time (summed), a
    // non-UTF-8 kernel name (read as U+FFFD; the corpus default).
    (
        "summary --input",
        "summary_text/truncated_mid_row.txt",
        Expect::Warn,
    ),
    (
        "summary --input",
        "summary_text/missing_columns.txt",
        Expect::Warn,
    ),
    (
        "summary --input",
        "summary_text/negative_time.txt",
        Expect::Warn,
    ),
    // compare leaves a value that is not finite out of its metric and sums
    // a negative time as read, with one warning per file and kind
    // (docs/compare.md#suspicious-values).
    (
        "compare metric CSVs",
        "metric_csv/nan_inf.csv",
        Expect::Warn,
    ),
    (
        "compare metric CSVs",
        "metric_csv/numbers_out_of_range.csv",
        Expect::Warn,
    ),
    (
        "compare metric CSVs",
        "metric_csv/negative_duration.csv",
        Expect::Warn,
    ),
    // compare reads summaries as summary does (the same warnings) and
    // traces as tracestat does; it needs a rank to compare.
    (
        "compare tarballs",
        "summary_text/truncated_mid_row.txt",
        Expect::Warn,
    ),
    (
        "compare tarballs",
        "summary_text/missing_columns.txt",
        Expect::Warn,
    ),
    (
        "compare tarballs",
        "summary_text/negative_time.txt",
        Expect::Warn,
    ),
    (
        "compare traces",
        "trace_json/empty.json",
        Expect::Fail(None),
    ),
    (
        "compare traces",
        "trace_json/gzip_empty.json",
        Expect::Fail(None),
    ),
    (
        "compare traces",
        "trace_json/no_trace_events.json",
        Expect::Fail(None),
    ),
    // The compute profile reads instruction counts, not GpuTime.
    (
        "roofline --compute",
        "metric_csv/negative_duration.csv",
        Expect::Accept("the compute profile does not read GpuTime[ns]"),
    ),
    (
        "roofline --compute",
        "metric_csv/duplicate_columns.csv",
        Expect::Accept("the compute profile does not read GpuTime[ns]"),
    ),
];

/// Scratch folders of one run: the bad input, copies of the valid files
/// (other inputs), an empty output folder.
struct Scratch {
    _dir: tempfile::TempDir,
    input: PathBuf,
    valid: PathBuf,
    out: PathBuf,
    cwd: PathBuf,
}

impl Scratch {
    fn new(name: &str, bytes: &[u8]) -> Scratch {
        let dir = tempfile::tempdir().expect("scratch dir");
        let input_dir = dir.path().join("in");
        let valid = dir.path().join("valid");
        let out = dir.path().join("out");
        let cwd = dir.path().join("cwd");
        for d in [&input_dir, &valid, &out, &cwd] {
            fs::create_dir(d).expect("scratch sub-folder");
        }
        let input = input_dir.join(name);
        fs::write(&input, bytes).expect("write input");
        copy_tree(&corpus_dir().join("valid"), &valid);
        Scratch {
            _dir: dir,
            input,
            valid,
            out,
            cwd,
        }
    }
}

/// Copies the files of `from` (and its folders) into `to`.
fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).expect("corpus folder") {
        let entry = entry.expect("corpus entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            fs::create_dir_all(&target).expect("folder copy");
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("file copy");
        }
    }
}

/// One way of running a tool on one kind of input.
struct Mode {
    /// Name used in [`OVERRIDES`] and failure messages.
    name: &'static str,
    /// Message prefix of the tool.
    tool: &'static str,
    binary: &'static str,
    kinds: &'static [Kind],
    /// Runs only on inputs it must refuse (uniview serves any readable
    /// trace until a browser fetches it, which a test cannot do).
    only_refusals: bool,
    /// Reads every device section (false: only `-d`, default 0, so a cut
    /// row in a later section goes unnoticed, which is fine).
    all_sections: bool,
    /// Why this mode's stdout may still show an input's control bytes raw
    /// (`None`: it may not; see `Invocation::raw_stdout`).
    raw_stdout: Option<&'static str>,
    /// Command line for a bad input of `kind`; the bad input is
    /// `s.input`, other inputs come from `s.valid`, outputs go to `s.out`.
    args: fn(kind: Kind, s: &Scratch) -> Vec<OsString>,
}

fn os(items: &[&dyn AsRef<std::ffi::OsStr>]) -> Vec<OsString> {
    items.iter().map(|i| i.as_ref().to_os_string()).collect()
}

/// `roofline` with the bad input in the role of `kind`, valid files in
/// the other roles, and both outputs (page and `--data`).
fn roofline_args(role: &str, s: &Scratch) -> Vec<OsString> {
    let pick = |r: &str, valid: &str| {
        if r == role {
            s.input.clone()
        } else {
            s.valid.join(valid)
        }
    };
    os(&[
        &"--compute",
        &pick("compute", "roofline_compute.csv"),
        &"--memory",
        &pick("memory", "roofline_memory.csv"),
        &"--device",
        &pick("device", "device.json"),
        &"--output",
        &s.out.join("roofline.html"),
        &"--data",
        &s.out.join("roofline.csv"),
    ])
}

/// `compare BAD VALID`: the bad input as the baseline, a valid file of the
/// same kind as the candidate, every row into `--csv`.
fn compare_args(valid: &str, s: &Scratch) -> Vec<OsString> {
    os(&[
        &s.input,
        &s.valid.join(valid),
        &"--csv",
        &s.out.join("rows.csv"),
    ])
}

const MODES: &[Mode] = &[
    Mode {
        name: "compare metric CSVs",
        tool: "compare",
        binary: "compare",
        kinds: &[Kind::MetricCsv],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| compare_args("metrics_2dev.csv", s),
    },
    Mode {
        name: "compare tarballs",
        tool: "compare",
        binary: "compare",
        kinds: &[Kind::Tarball, Kind::SummaryText],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| compare_args("summary.tgz", s),
    },
    Mode {
        name: "compare traces",
        tool: "compare",
        binary: "compare",
        kinds: &[Kind::TraceJson],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| compare_args("python.4100.1.json", s),
    },
    Mode {
        name: "mergetrace --stats --schema",
        tool: "mergetrace",
        binary: "mergetrace",
        kinds: &[Kind::JsonSchema],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| {
            os(&[
                &"-o",
                &s.out.join("all.json"),
                &"--stats",
                &s.out.join("stats.csv"),
                &"--schema",
                &s.input,
                &s.valid.join("python.4100.1.json"),
            ])
        },
    },
    Mode {
        name: "tracestat",
        tool: "tracestat",
        binary: "tracestat",
        kinds: &[Kind::TraceJson],
        all_sections: true,
        only_refusals: false,
        // Known gap: the console report (tracestat/src/console.rs) prints
        // kernel and range names as read; its messages are escaped.
        raw_stdout: None,
        // Alone: with a second valid trace of the same rank every accepted
        // input would also warn "rank 1 is in both ...".
        args: |_, s| {
            os(&[
                &"--json",
                &s.out.join("report.json"),
                &"--csv",
                &s.out.join("csv"),
                &s.input,
            ])
        },
    },
    Mode {
        name: "uniview",
        tool: "uniview",
        binary: "uniview",
        kinds: &[Kind::TraceJson],
        all_sections: true,
        only_refusals: true,
        raw_stdout: None,
        args: |_, s| os(&[&"-t", &s.input, &"--no-browser"]),
    },
    Mode {
        name: "analyze stall report",
        tool: "analyze",
        binary: "analyze",
        kinds: &[Kind::ShaderDump, Kind::StallCsv],
        all_sections: false,
        only_refusals: false,
        raw_stdout: None,
        args: |kind, s| {
            let (dump, stalls) = match kind {
                Kind::ShaderDump => (s.input.clone(), s.valid.join("stalls_2dev.csv")),
                _ => (s.valid.join("dump"), s.input.clone()),
            };
            os(&[
                &"-m",
                &"XVE_ACTIVE[%]",
                &"-y",
                &"Percent",
                &"-s",
                &dump,
                &"-r",
                &s.out.join("report.txt"),
                &"-o",
                &s.out.join("stalls.pdf"),
                &stalls,
            ])
        },
    },
    Mode {
        name: "categorize",
        tool: "categorize",
        binary: "categorize",
        kinds: &[Kind::IniSchema],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| os(&[&"--input", &s.input, &"--output", &s.out.join("rules.json")]),
    },
    Mode {
        name: "summary --schema",
        tool: "summary",
        binary: "summary",
        kinds: &[Kind::JsonSchema],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| {
            os(&[
                &"--input",
                &s.valid.join("summary.tgz"),
                &"--schema",
                &s.input,
                &"--output",
                &s.out.join("summary.json"),
            ])
        },
    },
    Mode {
        name: "summary --input",
        tool: "summary",
        binary: "summary",
        kinds: &[Kind::Tarball, Kind::SummaryText],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| {
            os(&[
                &"--input",
                &s.input,
                &"--schema",
                &s.valid.join("rules.json"),
                &"--output",
                &s.out.join("summary.json"),
                &"--per-rank",
                &s.out.join("ranks.csv"),
            ])
        },
    },
    Mode {
        name: "analyze charts",
        tool: "analyze",
        binary: "analyze",
        kinds: &[Kind::MetricCsv, Kind::StallCsv, Kind::OptionFile],
        all_sections: false,
        only_refusals: false,
        raw_stdout: None,
        args: |kind, s| {
            let pdf = s.out.join("charts.pdf");
            let data = s.out.join("charts.csv");
            match kind {
                Kind::OptionFile => os(&[
                    &"-f",
                    &s.input,
                    &"-m",
                    &"XVE_ACTIVE[%]",
                    &"-y",
                    &"Percent",
                    &"-o",
                    &pdf,
                    &"--data",
                    &data,
                    &s.valid.join("metrics_2dev.csv"),
                ]),
                // Every instance of every kernel, a metric and a
                // throughput chart (GpuTime[ns] is read for -b).
                Kind::MetricCsv => os(&[
                    &"-i",
                    &"0",
                    &"-m",
                    &"XVE_ACTIVE[%],XVE_THREADS_OCCUPANCY_ALL[%]",
                    &"-y",
                    &"Percent",
                    &"-b",
                    &"GPU_MEMORY_BYTE_READ[bytes]",
                    &"-o",
                    &pdf,
                    &"--data",
                    &data,
                    &s.input,
                ]),
                // The mode follows the header, as in the original: -m is
                // ignored for stall files (and makes a cut header that
                // looks like a metric file fail on the file, not on -m).
                _ => os(&[
                    &"-m",
                    &"XVE_ACTIVE[%]",
                    &"-y",
                    &"Percent",
                    &"-o",
                    &pdf,
                    &"--data",
                    &data,
                    &s.input,
                ]),
            }
        },
    },
    Mode {
        name: "mergetrace",
        tool: "mergetrace",
        binary: "mergetrace",
        kinds: &[Kind::TraceJson],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| {
            os(&[
                &"-o",
                &s.out.join("all.json"),
                &s.input,
                &s.valid.join("python.4100.1.json"),
            ])
        },
    },
    Mode {
        name: "mergetrace --stats",
        tool: "mergetrace",
        binary: "mergetrace",
        kinds: &[Kind::TraceJson],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| {
            os(&[
                &"-o",
                &s.out.join("all.json"),
                &"--stats",
                &s.out.join("stats.csv"),
                &"--align",
                &"start",
                &"--remap-pids",
                &s.input,
                &s.valid.join("python.4100.1.json"),
            ])
        },
    },
    Mode {
        name: "analyze -l",
        tool: "analyze",
        binary: "analyze",
        kinds: &[Kind::MetricCsv, Kind::StallCsv, Kind::OptionFile],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |kind, s| {
            let out = s.out.join("listing.txt");
            match kind {
                Kind::OptionFile => os(&[
                    &"-f",
                    &s.input,
                    &"-l",
                    &"-o",
                    &out,
                    &s.valid.join("metrics_2dev.csv"),
                ]),
                _ => os(&[&"-l", &"-o", &out, &s.input]),
            }
        },
    },
    Mode {
        name: "roofline --compute",
        tool: "roofline",
        binary: "roofline",
        kinds: &[Kind::MetricCsv],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| roofline_args("compute", s),
    },
    Mode {
        name: "roofline --memory",
        tool: "roofline",
        binary: "roofline",
        kinds: &[Kind::MetricCsv],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| roofline_args("memory", s),
    },
    Mode {
        name: "roofline --device",
        tool: "roofline",
        binary: "roofline",
        kinds: &[Kind::DeviceConfig],
        all_sections: true,
        only_refusals: false,
        raw_stdout: None,
        args: |_, s| roofline_args("device", s),
    },
];

fn corpus_dir() -> PathBuf {
    repo_root().join("tests").join("bad_inputs")
}

fn expectation(mode: &str, file: &str, default: &Expect) -> Expect {
    OVERRIDES
        .iter()
        .find(|(m, f, _)| *m == mode && *f == file)
        .map_or_else(|| default.clone(), |(_, _, e)| e.clone())
}

/// A gzip tarball holding the valid log and `bytes` as a second member,
/// as `summary` reads them.
fn wrap_in_tarball(bytes: &[u8]) -> Vec<u8> {
    let valid = fs::read(corpus_dir().join("valid/output.4100.1.txt")).expect("valid log");
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    for (name, data) in [
        ("output.4100.1.txt", &valid[..]),
        ("output.4200.2.txt", bytes),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, data)
            .expect("tar member");
    }
    tar.into_inner()
        .and_then(|gz| gz.finish())
        .expect("tarball")
}

/// Runs `mode` on `bytes` (named `name`) and records a failure message.
fn run_case(mode: &Mode, kind: Kind, name: &str, bytes: &[u8], expect: &Expect) -> Option<String> {
    let scratch = match kind {
        Kind::SummaryText => Scratch::new(&format!("{name}.tgz"), &wrap_in_tarball(bytes)),
        Kind::ShaderDump => {
            // The dump folder is the input; the file keeps an IGC name.
            let mut s = Scratch::new("dump", b"");
            fs::remove_file(&s.input).expect("placeholder");
            fs::create_dir(&s.input).expect("dump folder");
            let asm = s
                .input
                .join("OCL_asm0123456789abcdef_simd16_entry_0001.asm");
            fs::write(asm, bytes).expect("asm file");
            s.input = s.input.clone();
            s
        }
        _ => Scratch::new(name, bytes),
    };
    let args = (mode.args)(kind, &scratch);
    let inv = Invocation {
        tool: mode.tool.to_string(),
        binary: tool_binary(mode.binary),
        args,
        inputs: vec![scratch.input.clone()],
        other_inputs: vec![scratch.valid.clone()],
        out_dir: scratch.out.clone(),
        cwd: scratch.cwd.clone(),
        raw_stdout: mode.raw_stdout,
    };
    check(&inv, expect)
        .err()
        .map(|e| format!("[{} on {name}, want {expect:?}] {e}", mode.name))
}

fn kind_of_case(file: &str) -> Kind {
    let folder = file.split('/').next().unwrap_or_default();
    KINDS
        .iter()
        .copied()
        .find(|k| k.folder() == folder)
        .unwrap_or_else(|| panic!("corpus file {file} is in an unknown folder"))
}

#[test]
fn corpus_table_lists_every_file() {
    let mut on_disk = Vec::new();
    for entry in fs::read_dir(corpus_dir()).expect("corpus folder") {
        let dir = entry.expect("corpus entry").path();
        let folder = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if !dir.is_dir() || folder == "valid" {
            continue;
        }
        for file in fs::read_dir(&dir).expect("kind folder") {
            let name = file.expect("corpus file").file_name();
            on_disk.push(format!("{folder}/{}", name.to_string_lossy()));
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = CASES.iter().map(|(f, _)| f.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed, "tests/bad_inputs and CASES differ");
    for (mode, file, _) in OVERRIDES {
        assert!(
            MODES.iter().any(|m| m.name == *mode),
            "override for unknown mode {mode}"
        );
        assert!(
            CASES.iter().any(|(f, _)| f == file),
            "override for unknown file {file}"
        );
    }
}

#[test]
fn every_tool_on_every_corpus_file() {
    let mut failures = Vec::new();
    let mut runs = 0;
    for (file, default) in CASES {
        let kind = kind_of_case(file);
        let path = corpus_dir().join(file);
        let bytes = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = Path::new(file)
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        for mode in MODES.iter().filter(|m| m.kinds.contains(&kind)) {
            let expect = expectation(mode.name, file, default);
            if mode.only_refusals && !matches!(expect, Expect::Fail(_)) {
                continue;
            }
            runs += 1;
            failures.extend(run_case(mode, kind, &name, &bytes, &expect));
        }
    }
    assert!(runs >= CASES.len(), "only {runs} runs");
    assert!(
        failures.is_empty(),
        "{} of {runs} runs broke the contract:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Valid files of each kind that truncations start from.
fn valid_base(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::MetricCsv => Some("metrics_2dev.csv"),
        Kind::StallCsv => Some("stalls_2dev.csv"),
        Kind::TraceJson => Some("python.4100.1.json"),
        Kind::OptionFile
        | Kind::DeviceConfig
        | Kind::IniSchema
        | Kind::JsonSchema
        | Kind::SummaryText
        | Kind::Tarball
        | Kind::ShaderDump => None,
    }
}

/// Lines that start a structural part of a metric/stall CSV: a banner, a
/// header, the first data row after a blank line (an instance start).
fn is_section_boundary(line: &[u8], previous: Option<&[u8]>) -> bool {
    let text = String::from_utf8_lossy(line);
    let t = text.trim();
    t.starts_with("=== Device")
        || t.starts_with("Kernel,")
        || t.is_empty()
        || previous.is_some_and(|p| {
            let p = String::from_utf8_lossy(p);
            p.trim().is_empty() || p.trim_start().starts_with("Kernel,")
        })
}

/// Cuts of a valid trace (one event per line, as unitrace writes them) at
/// every line start after the first and in the middle of every line: what
/// a killed process leaves. Every cut misses its closing `]}`, so every
/// tool must repair it in memory with a warning; a cut before the first
/// complete event that is not metadata leaves no event to report on,
/// which tracestat and compare refuse and mergetrace skips with a warning
/// (docs/tracestat.md#inputs); a cut before the first device command ends
/// leaves host events only, which compare refuses too
/// (docs/compare.md#inputs).
#[test]
fn traces_truncated_at_every_event() {
    let kind = Kind::TraceJson;
    let base = valid_base(kind).unwrap_or_default();
    let bytes = fs::read(corpus_dir().join("valid").join(base)).expect("valid trace");
    let first_event_end = {
        let mut end = 0;
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            end += line.len();
            if line.starts_with(b"{\"ph\": \"") && !line.starts_with(b"{\"ph\": \"M\"") {
                break;
            }
        }
        end
    };
    let first_device_end = {
        let mut end = 0;
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            end += line.len();
            if line.windows(8).any(|w| w == b"\"gpu_op\"") {
                break;
            }
        }
        end
    };
    let mut failures = Vec::new();
    let mut runs = 0;
    let mut offset = 0usize;
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        let cuts = [offset, offset + line.len() / 2];
        offset += line.len();
        for cut in cuts {
            if cut == 0 || cut >= bytes.len() - 3 {
                continue; // the empty trace is in the corpus; `]}` must be cut
            }
            let name = format!("cut{cut}.json");
            let modes = MODES.iter().filter(|m| m.kinds.contains(&kind));
            for mode in modes.filter(|m| !m.only_refusals) {
                let refused = match mode.name {
                    "tracestat" => cut < first_event_end,
                    "compare traces" => cut < first_device_end,
                    _ => false,
                };
                let expect = if refused {
                    Expect::Fail(None)
                } else {
                    Expect::Warn
                };
                runs += 1;
                failures.extend(run_case(mode, kind, &name, &bytes[..cut], &expect));
            }
        }
    }
    assert!(runs >= 10, "only {runs} truncations");
    assert!(
        failures.is_empty(),
        "{} of {runs} runs broke the contract:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The valid files cut at every section boundary: at the line start
/// (`Either`: often still a valid file) and in the middle of the line (a
/// cut data row must fail at its line; a cut banner or header may still be
/// a readable file).
#[test]
fn truncated_at_every_section_boundary() {
    let mut failures = Vec::new();
    let mut runs = 0;
    for kind in [Kind::MetricCsv, Kind::StallCsv] {
        let Some(base) = valid_base(kind) else {
            continue;
        };
        let bytes = fs::read(corpus_dir().join("valid").join(base)).expect("valid base file");
        let mut offset = 0usize;
        let mut previous: Option<&[u8]> = None;
        let mut banners = 0;
        for (index, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
            let line_no = index as u64 + 1;
            let body = line.strip_suffix(b"\n").unwrap_or(line);
            if String::from_utf8_lossy(body).contains("=== Device") {
                banners += 1;
            }
            if is_section_boundary(body, previous) {
                let is_row = !body.is_empty()
                    && !String::from_utf8_lossy(body).contains("=== Device")
                    && !String::from_utf8_lossy(body)
                        .trim_start()
                        .starts_with("Kernel,");
                let mut cuts = vec![(offset, Expect::Either)];
                if body.len() > 1 {
                    let mid = if is_row {
                        Expect::Fail(Some(line_no))
                    } else {
                        Expect::Either
                    };
                    cuts.push((offset + body.len() / 2, mid));
                }
                for (cut, expect) in cuts {
                    if cut == 0 {
                        continue; // the empty file is in the corpus
                    }
                    let name = format!("cut{cut}.{}", kind.extension());
                    for mode in MODES.iter().filter(|m| m.kinds.contains(&kind)) {
                        // A cut in device 1 is not read by device-0 tools.
                        let expect = if banners > 1 && !mode.all_sections {
                            Expect::Either
                        } else {
                            expect.clone()
                        };
                        runs += 1;
                        failures.extend(run_case(mode, kind, &name, &bytes[..cut], &expect));
                    }
                }
            }
            previous = Some(body);
            offset += line.len();
        }
    }
    assert!(runs >= 10, "only {runs} truncations");
    assert!(
        failures.is_empty(),
        "{} of {runs} runs broke the contract:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Lines longer than any reader accepts (generated: megabytes are not
/// committed): one data row of 2 MiB after a valid header, and 3 MiB
/// without any newline.
#[test]
fn huge_lines() {
    let mut failures = Vec::new();
    for kind in [Kind::MetricCsv, Kind::StallCsv] {
        let base = fs::read(
            corpus_dir()
                .join("valid")
                .join(valid_base(kind).unwrap_or_default()),
        )
        .expect("valid base file");
        // Keep the first 4 lines (blank, banner, blank, header).
        let header_end = base
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .nth(3)
            .map_or(base.len(), |(i, _)| i + 1);
        let mut long_row = base[..header_end].to_vec();
        long_row.push(b'"');
        long_row.extend_from_slice(&vec![b'k'; 2 << 20]);
        long_row.extend_from_slice(b"\", 1, 2, 3\n");
        let no_newline = vec![b'x'; 3 << 20];
        for (name, bytes, expect) in [
            ("long_row", &long_row, Expect::Fail(Some(5))),
            ("no_newline", &no_newline, Expect::Fail(None)),
        ] {
            let name = format!("{name}.{}", kind.extension());
            for mode in MODES.iter().filter(|m| m.kinds.contains(&kind)) {
                failures.extend(run_case(mode, kind, &name, bytes, &expect));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "contract broken:\n{}",
        failures.join("\n")
    );
}

/// A missing input and a folder where a file is expected.
#[test]
fn missing_and_directory_inputs() {
    let mut failures = Vec::new();
    for mode in MODES {
        for &kind in mode.kinds {
            if kind == Kind::OptionFile {
                continue;
            }
            let scratch = Scratch::new("present.csv", b"");
            let missing = scratch.input.with_file_name("missing.csv");
            let folder = scratch.input.with_file_name("folder.csv");
            fs::create_dir(&folder).expect("folder input");
            for input in [missing, folder] {
                let s = Scratch {
                    _dir: tempfile::tempdir().expect("dir"),
                    input: input.clone(),
                    valid: scratch.valid.clone(),
                    out: scratch.out.clone(),
                    cwd: scratch.cwd.clone(),
                };
                let inv = Invocation {
                    tool: mode.tool.to_string(),
                    binary: tool_binary(mode.binary),
                    args: (mode.args)(kind, &s),
                    inputs: vec![input.clone()],
                    other_inputs: vec![scratch.valid.clone()],
                    out_dir: scratch.out.clone(),
                    cwd: scratch.cwd.clone(),
                    raw_stdout: None,
                };
                if let Err(e) = check(&inv, &Expect::Fail(None)) {
                    failures.push(format!("[{} on {}] {e}", mode.name, input.display()));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "contract broken:\n{}",
        failures.join("\n")
    );
}
