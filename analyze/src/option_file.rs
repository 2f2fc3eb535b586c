//! Option files (`-f FILE`, docs/formats.md#option-file): the words of a file are put in
//! place of `-f FILE` before clap parses the command line, so repeatable
//! options accumulate in command-line order and later single-valued options
//! win. Also the built-in presets (the original's metric sets) that `-f
//! pvc/ComputeBasic.txt` names when no such file exists.
//!
//! Which options take a value comes from clap's own description of
//! [`Args`] (`Args::command()`), so it cannot drift from the command line.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

use unitrace_core::InputError;

use crate::args::Args;
use crate::plan::{ChartOptions, StallOptions, TlsFiles};

/// Problem while expanding an option file; reported as a usage error (exit 2)
/// like argparse does.
#[derive(Debug, thiserror::Error)]
pub enum OptionFileError {
    #[error("{path}: cannot open option file: {reason}")]
    Open { path: String, reason: String },
    #[error("{path}: {problem}")]
    Syntax { path: String, problem: String },
    #[error("-f/--config needs a file name")]
    MissingValue,
}

/// The server options an option file gives (uniview's `-f`,
/// docs/compatibility.md#uniview-trace-server): its words are read as analyze's command line for `input`
/// would be; options the server does not use (`-o`, `-k`, …) are accepted
/// and ignored, as analyze's server ignores them.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub charts: ChartOptions,
    pub stall: StallOptions,
    pub tls: TlsFiles,
}

pub fn server_options(path: &Path, input: &Path) -> anyhow::Result<ServerOptions> {
    let words = read_option_file(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    let argv = std::iter::once(OsString::from("analyze"))
        .chain(words.into_iter().map(OsString::from))
        .chain([OsString::from("--"), input.as_os_str().to_owned()]);
    let args = <Args as clap::Parser>::try_parse_from(argv).map_err(|e| {
        anyhow::anyhow!(
            "the config file gives options analyze does not accept: {}",
            e.to_string().trim()
        )
    })?;
    Ok(ServerOptions {
        charts: ChartOptions::from_args(&args),
        stall: StallOptions::from_args(&args),
        tls: TlsFiles {
            certificate: args.certificate,
            key: args.key,
        },
    })
}

/// Replaces every `-f FILE` / `-fFILE` / `--config FILE` / `--config=FILE`
/// (and unambiguous abbreviations `--co`…`--config`) by the options the file
/// holds, so repeatable options accumulate in command-line order and later
/// single-valued options win (docs/formats.md#option-file).
pub fn expand_option_files(argv: Vec<OsString>) -> Result<Vec<OsString>, OptionFileError> {
    let mut out = Vec::with_capacity(argv.len());
    let mut iter = argv.into_iter();
    if let Some(program) = iter.next() {
        out.push(program);
    }
    let mut only_positionals = false;
    while let Some(arg) = iter.next() {
        let text = arg.to_string_lossy().into_owned();
        if only_positionals {
            out.push(arg);
            continue;
        }
        if text == "--" {
            only_positionals = true;
            out.push(arg);
            continue;
        }
        let file = if text == "-f" || is_config_long(&text) {
            match iter.next() {
                Some(v) => Some(PathBuf::from(v)),
                None => return Err(OptionFileError::MissingValue),
            }
        } else if let Some(rest) = text.strip_prefix("-f").filter(|r| !r.is_empty()) {
            Some(PathBuf::from(rest.strip_prefix('=').unwrap_or(rest)))
        } else if let Some((name, value)) = text.split_once('=') {
            if is_config_long(name) {
                Some(PathBuf::from(value))
            } else {
                None
            }
        } else {
            None
        };
        match file {
            Some(path) => {
                for token in read_option_file(&path)? {
                    out.push(OsString::from(token));
                }
                // Keep the file in `Args::config`: it is an input, which
                // no output may overwrite (docs/errors.md#inputs-never-modified).
                let mut config = OsString::from("--config=");
                config.push(path.as_os_str());
                out.push(config);
            }
            None => out.push(arg),
        }
    }
    Ok(out)
}

/// `--co`, `--con`, … `--config`: `--config` and the abbreviations of it
/// that argparse (and clap's `infer_long_args`) accept, i.e. that abbreviate
/// no other long option (`--c` is ambiguous with `--certificate`).
fn is_config_long(text: &str) -> bool {
    let Some(long) = text.strip_prefix("--") else {
        return false;
    };
    if long.is_empty() || !"config".starts_with(long) {
        return false;
    }
    long == "config"
        || OptionTable::get()
            .longs
            .iter()
            .all(|(name, _)| name == "config" || !name.starts_with(long))
}

/// The short and long names of analyze's options and whether each takes
/// a value, read from clap's description of [`Args`].
struct OptionTable {
    /// Short letters of options that take a value.
    value_shorts: Vec<char>,
    /// Every long name (`--help`, `--version` included), with whether it
    /// takes a value.
    longs: Vec<(String, bool)>,
}

impl OptionTable {
    fn get() -> &'static OptionTable {
        static TABLE: std::sync::OnceLock<OptionTable> = std::sync::OnceLock::new();
        TABLE.get_or_init(|| {
            let mut command = Args::command();
            // Adds the generated --help and --version.
            command.build();
            let mut table = OptionTable {
                value_shorts: Vec::new(),
                longs: Vec::new(),
            };
            for arg in command.get_arguments() {
                if arg.is_positional() {
                    continue;
                }
                let takes_value = arg.get_action().takes_values();
                if let (Some(short), true) = (arg.get_short(), takes_value) {
                    table.value_shorts.push(short);
                }
                if let Some(long) = arg.get_long() {
                    table.longs.push((long.to_string(), takes_value));
                }
            }
            table
        })
    }
}

/// Reads an option file and splits it like `shlex.split` (POSIX mode).
pub fn read_option_file(path: &Path) -> Result<Vec<String>, OptionFileError> {
    use unitrace_core::whole_file::{read_capped, MAX_SMALL_FILE_BYTES};
    let open_error = |reason: String| OptionFileError::Open {
        path: path.display().to_string(),
        reason,
    };
    let bytes =
        match std::fs::metadata(path) {
            // `-f pvc/ComputeBasic.txt` and the original's preset paths name
            // our built-in presets when no such file exists.
            Err(e) => match builtin_preset(path) {
                Some(text) if e.kind() == std::io::ErrorKind::NotFound => text.as_bytes().to_vec(),
                _ => return Err(open_error(InputError::io(path, &e).problem)),
            },
            Ok(meta) if meta.is_dir() => return Err(open_error("is a directory".into())),
            // Capped: `-f /dev/zero` fails at once (docs/robustness.md#bounds).
            Ok(_) => read_capped(path, MAX_SMALL_FILE_BYTES, "shell-quoted option file").map_err(
                |e| OptionFileError::Syntax {
                    path: path.display().to_string(),
                    problem: e.problem,
                },
            )?,
        };
    let text = String::from_utf8_lossy(&bytes);
    let syntax = |problem| OptionFileError::Syntax {
        path: path.display().to_string(),
        problem,
    };
    let words = shell_split(&text).map_err(syntax)?;
    check_option_words(&words).map_err(syntax)?;
    Ok(words)
}

/// Splits an option file like Python's `shlex.split` (docs/formats.md#option-file); the
/// splitter is shared with roofline's `--app` in `unitrace_core::shell_words`.
pub fn shell_split(text: &str) -> Result<Vec<String>, String> {
    use unitrace_core::shell_words::{split, Dialect};
    split(text, Dialect::Shlex).map_err(|e| e.to_string())
}

/// Preset option files shipped with analyze (the metric sets of the
/// original's `metrics/config/<family>/*.txt`), by `<family>/<name>`.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "bmg/ComputeBasic.txt",
        include_str!("../presets/bmg/ComputeBasic.txt"),
    ),
    (
        "bmg/MemoryProfile.txt",
        include_str!("../presets/bmg/MemoryProfile.txt"),
    ),
    (
        "pvc/ComputeBasic.txt",
        include_str!("../presets/pvc/ComputeBasic.txt"),
    ),
    (
        "pvc/GpuOffload.txt",
        include_str!("../presets/pvc/GpuOffload.txt"),
    ),
    (
        "pvc/L1ProfileReads.txt",
        include_str!("../presets/pvc/L1ProfileReads.txt"),
    ),
    (
        "pvc/L1ProfileSlmBankConflicts.txt",
        include_str!("../presets/pvc/L1ProfileSlmBankConflicts.txt"),
    ),
    (
        "pvc/L1ProfileWrites.txt",
        include_str!("../presets/pvc/L1ProfileWrites.txt"),
    ),
    (
        "pvc/MemProfile.txt",
        include_str!("../presets/pvc/MemProfile.txt"),
    ),
];

/// The built-in preset an option-file path names when no such file exists:
/// its last two components `<family>/<name>` (`pvc/ComputeBasic.txt`,
/// `config/pvc/ComputeBasic.txt`, the original's
/// `…/scripts/metrics/config/pvc/ComputeBasic.txt`); `.txt` may be left out
/// and case is ignored.
pub fn builtin_preset(path: &Path) -> Option<&'static str> {
    let mut parts = path.components().rev().filter_map(|c| match c {
        std::path::Component::Normal(s) => Some(s.to_string_lossy().to_ascii_lowercase()),
        _ => None,
    });
    let name = parts.next()?;
    let family = parts.next()?;
    let name = if name.ends_with(".txt") {
        name
    } else {
        format!("{name}.txt")
    };
    let key = format!("{family}/{name}");
    PRESETS
        .iter()
        .find(|(k, _)| k.to_ascii_lowercase() == key)
        .map(|(_, text)| *text)
}

/// Refuses an option file that holds a positional word, i.e. an input
/// path: the input is always given on the command line (an input hidden in
/// a preset would silently replace or clash with it).
pub fn check_option_words(words: &[String]) -> Result<(), String> {
    let table = OptionTable::get();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        // A long option takes a value unless it has one attached or
        // abbreviates a flag (unknown names are clap's to refuse); a short
        // one when it is a value-taking letter alone.
        let takes_value = if let Some(long) = w.strip_prefix("--") {
            !long.contains('=')
                && !long.is_empty()
                && !table
                    .longs
                    .iter()
                    .any(|(name, value)| !value && name.starts_with(long))
        } else if let Some(short) = w.strip_prefix('-') {
            let mut letters = short.chars();
            match (letters.next(), letters.next()) {
                (Some(letter), None) => table.value_shorts.contains(&letter),
                _ => false,
            }
        } else {
            return Err(format!(
                "`{w}` is not an option; option files hold options only (give the input file on the command line)"
            ));
        };
        i += if takes_value { 2 } else { 1 };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn splits_like_shlex() {
        assert_eq!(
            shell_split("-m \"A[%],B[%]\" -y 'Y label'\n-b x\\ y #z").unwrap(),
            vec!["-m", "A[%],B[%]", "-y", "Y label", "-b", "x y", "#z"]
        );
        assert_eq!(shell_split("a\"b\\\"c\"d").unwrap(), vec!["ab\"cd"]);
        assert!(shell_split("-m \"open").is_err());
        assert_eq!(shell_split("  \n ").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn expands_option_file_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let opts = dir.path().join("opts.txt");
        std::fs::write(&opts, "-m \"B[x]\" -y 'Y2' -t Later").unwrap();
        let argv: Vec<OsString> = [
            "analyze",
            "-m",
            "A[x]",
            "-y",
            "Y1",
            "--conf",
            opts.to_str().unwrap(),
            "-m",
            "C[x]",
            "-y",
            "Y3",
            "in.csv",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let expanded = expand_option_files(argv).unwrap();
        let args = Args::try_parse_from(expanded).unwrap();
        assert_eq!(args.metrics, vec!["A[x]", "B[x]", "C[x]"]);
        assert_eq!(args.ylabels, vec!["Y1", "Y2", "Y3"]);
        assert_eq!(args.title, "Later");
        assert_eq!(args.input, PathBuf::from("in.csv"));
        assert_eq!(args.config, vec![opts]);
    }

    #[test]
    fn presets_resolve_from_original_paths() {
        assert!(builtin_preset(Path::new("pvc/ComputeBasic.txt")).is_some());
        assert!(
            builtin_preset(Path::new("/x/scripts/metrics/config/bmg/MemoryProfile.txt")).is_some()
        );
        assert!(builtin_preset(Path::new("PVC/computebasic")).is_some());
        assert!(builtin_preset(Path::new("ComputeBasic.txt")).is_none());
        assert!(builtin_preset(Path::new("xe/ComputeBasic.txt")).is_none());
        for (name, text) in PRESETS {
            let words = shell_split(text).unwrap();
            check_option_words(&words).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(words.iter().any(|w| w == "-m"), "{name}");
        }
    }

    #[test]
    fn value_taking_options_come_from_the_command_line_definition() {
        let table = OptionTable::get();
        let mut shorts = table.value_shorts.clone();
        shorts.sort_unstable();
        assert_eq!(shorts.iter().collect::<String>(), "bcdefgikmnorstxy");
        let flags: Vec<&str> = table
            .longs
            .iter()
            .filter(|(_, value)| !value)
            .map(|(name, _)| name.as_str())
            .collect();
        for flag in [
            "list",
            "http",
            "https",
            "by-line",
            "keep-invalid",
            "strict",
            "result-dir",
            "help",
            "version",
        ] {
            assert!(flags.contains(&flag), "{flag} in {flags:?}");
        }
        assert_eq!(flags.len(), 9, "{flags:?}");
        // `--c` also abbreviates `--certificate`.
        assert!(is_config_long("--config") && is_config_long("--co"));
        assert!(!is_config_long("--c") && !is_config_long("--configs"));
        assert!(!is_config_long("--") && !is_config_long("-f"));
    }

    #[test]
    fn server_options_read_an_option_file_as_analyze_would() {
        let dir = tempfile::tempdir().unwrap();
        let opts = dir.path().join("opts.txt");
        std::fs::write(&opts, "-m 'A[x],B[x]' -y Y -t T -n 3 -o ignored.pdf").unwrap();
        let options = server_options(&opts, Path::new("in.csv")).unwrap();
        assert_eq!(options.charts.metrics, ["A[x],B[x]"]);
        assert_eq!(options.charts.ylabels, ["Y"]);
        assert_eq!(options.charts.title, "T");
        assert_eq!(options.charts.xlabel, crate::args::DEFAULT_XLABEL);
        assert_eq!(options.stall.numtopstalls, 3);
        std::fs::write(&opts, "--bogus 1").unwrap();
        let err = server_options(&opts, Path::new("in.csv")).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("the config file gives options analyze does not accept"));
    }

    #[test]
    fn option_words_reject_positionals() {
        let ok: Vec<String> = ["-m", "A", "-l", "--inst", "0", "--kernel=K", "-q"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(check_option_words(&ok).is_ok());
        let bad: Vec<String> = ["-m", "A", "perf.csv"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert!(check_option_words(&bad).unwrap_err().contains("perf.csv"));
    }
}
