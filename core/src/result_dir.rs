//! The tree `unitrace --result-dir DIR` writes (docs/formats.md#result-dir),
//! discovered once for every tool: mergetrace and uniview (`--result-dir`,
//! `--ranks`), analyze (metric files per rank and device), summary (the
//! text logs) and tracestat.
//!
//! Layout: one folder per process, `DIR/[rank_<r>.]<app>.<pid>/`, holding
//! `chrome_trace.json` or `chrome_trace.pftrace`, `metrics/metrics_<device>.csv`
//! (Windows: `metrics/metrics.csv`), the text reports (`host_timing.txt`,
//! `device_timing.txt`, ...), `oskmd.json` and, in the launcher's own folder
//! `[rank_<r>.]unitrace.<pid>/`, `run_config.json`. The upstream scripts
//! find files by name anywhere below DIR and the rank by a `rank_<r>.`
//! folder anywhere on the way; [`ResultDir::open`] does the same in one
//! walk (`crate::walk`: regular files only, links followed, every folder
//! walked once, so neither a FIFO nor a link loop can hang a tool).
//!
//! Order: everything is listed in rank order (files without a rank last),
//! then by path, so the output of a tool does not depend on the file
//! system's listing order (upstream lists in that order;
//! docs/compatibility.md#mergetrace-result-dir).
//!
//! Usage:
//! ```no_run
//! use unitrace_core::result_dir::{ResultDir, parse_rank_list};
//! let dir = ResultDir::open("results".as_ref())?;
//! let ranks = parse_rank_list(["0-3,7", "9"])?;        // [0, 1, 2, 3, 7, 9]
//! let sel = dir.traces(Some(&ranks));                  // JSON preferred over .pftrace
//! for t in &sel.files { println!("{:?} {}", t.rank, t.path.display()); }
//! for m in dir.metric_files(None) { println!("{:?} {:?}", m.rank, m.device()); }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::timeline::rank::rank_from_path;

/// File name of the JSON timeline in a result dir.
pub const TRACE_JSON: &str = "chrome_trace.json";
/// File name of the protobuf timeline (`--output-format protobuf`).
pub const TRACE_PFTRACE: &str = "chrome_trace.pftrace";

/// Format of a timeline file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    Json,
    Pftrace,
}

impl TraceFormat {
    /// The result-dir file name of this format.
    pub fn file_name(self) -> &'static str {
        match self {
            TraceFormat::Json => TRACE_JSON,
            TraceFormat::Pftrace => TRACE_PFTRACE,
        }
    }

    /// The format a path's extension says (`.pftrace`, else JSON), as the
    /// upstream scripts route inputs.
    pub fn of_path(path: &Path) -> TraceFormat {
        if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("pftrace"))
        {
            TraceFormat::Pftrace
        } else {
            TraceFormat::Json
        }
    }
}

/// The text reports unitrace writes per process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LogKind {
    /// `host_timing.txt` (`-h`)
    HostTiming,
    /// `device_timing.txt` (`-d`)
    DeviceTiming,
    /// `device_submission.txt` (`-s`)
    DeviceSubmission,
    /// `call_logging.txt` (`-c`)
    CallLogging,
    /// `ccl_summary_report.txt` (`-r`)
    CclSummary,
    /// `device_timeline.txt` (`-t`)
    DeviceTimeline,
}

impl LogKind {
    pub const ALL: [LogKind; 6] = [
        LogKind::HostTiming,
        LogKind::DeviceTiming,
        LogKind::DeviceSubmission,
        LogKind::CallLogging,
        LogKind::CclSummary,
        LogKind::DeviceTimeline,
    ];

    pub fn file_name(self) -> &'static str {
        match self {
            LogKind::HostTiming => "host_timing.txt",
            LogKind::DeviceTiming => "device_timing.txt",
            LogKind::DeviceSubmission => "device_submission.txt",
            LogKind::CallLogging => "call_logging.txt",
            LogKind::CclSummary => "ccl_summary_report.txt",
            LogKind::DeviceTimeline => "device_timeline.txt",
        }
    }
}

/// What a discovered file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    Trace(TraceFormat),
    /// `metrics/metrics_<device>.csv`; `device` is `None` for the Windows
    /// `metrics/metrics.csv`.
    Metrics {
        device: Option<u32>,
    },
    Log(LogKind),
    /// `run_config.json` (written by the launcher process).
    RunConfig,
    /// `oskmd.json` (kernel-mode driver trace).
    KmdTrace,
}

/// One file of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    pub kind: FileKind,
    /// `r` of the innermost `rank_<r>` folder above the file (below the
    /// root), the rank rule of every tool (docs/formats.md#timeline-ranks).
    pub rank: Option<u32>,
    /// The process folder (`[rank_<r>.]<app>.<pid>`) the file is in, when
    /// its name has that shape.
    pub process: Option<ProcessFolder>,
}

impl Found {
    /// The device number of a metric file (`metrics_<n>.csv`).
    pub fn device(&self) -> Option<u32> {
        match self.kind {
            FileKind::Metrics { device } => device,
            _ => None,
        }
    }
}

/// `[rank_<r>.]<app>.<pid>` parsed from a folder name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessFolder {
    pub app: String,
    pub pid: u64,
}

/// Why a result dir cannot be used.
#[derive(Debug)]
pub enum ResultDirError {
    /// The directory does not exist.
    NotFound(PathBuf),
    /// The path is not a directory.
    NotADirectory(PathBuf),
    /// The top directory cannot be read.
    Io(PathBuf, io::Error),
}

impl fmt::Display for ResultDirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The texts of mergetrace.py's argument checks.
        match self {
            ResultDirError::NotFound(p) => write!(f, "Directory '{}' does not exist", p.display()),
            ResultDirError::NotADirectory(p) => {
                write!(f, "'{}' is not a directory", p.display())
            }
            ResultDirError::Io(p, e) => write!(f, "{}: {e}", p.display()),
        }
    }
}

impl std::error::Error for ResultDirError {}

/// A discovered result dir.
#[derive(Debug, Clone)]
pub struct ResultDir {
    /// As given by the user (messages print it as given).
    pub root: PathBuf,
    /// Every file recognised, in rank order then path order.
    pub files: Vec<Found>,
    /// What the walk skipped or followed out of the tree, one warning each,
    /// printed `PATH: problem` (the problem ends in `; skipped` or
    /// `; followed`): folders that cannot be read, entries with an input's
    /// name that are no regular file (FIFOs, sockets, devices) or cannot be
    /// opened, links to folders walked already, links out of the tree
    /// (docs/robustness.md#walked-folders, `crate::walk`).
    pub unreadable: Vec<(PathBuf, String)>,
}

/// The timelines chosen for a run (see [`ResultDir::traces`]).
#[derive(Debug, Clone, Default)]
pub struct TraceSelection {
    /// `None` when nothing was found.
    pub format: Option<TraceFormat>,
    pub files: Vec<Found>,
    /// Requested ranks without a timeline of the chosen format.
    pub missing_ranks: Vec<u32>,
}

impl ResultDir {
    /// Walks `root` once and classifies every file unitrace writes.
    pub fn open(root: &Path) -> Result<ResultDir, ResultDirError> {
        let meta = match std::fs::metadata(root) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(ResultDirError::NotFound(root.to_path_buf()))
            }
            Err(e) => return Err(ResultDirError::Io(root.to_path_buf(), e)),
        };
        if !meta.is_dir() {
            return Err(ResultDirError::NotADirectory(root.to_path_buf()));
        }
        let walk = crate::walk::walk(root, crate::walk::Depth::Tree, &|p| classify(p).is_some())
            .map_err(|e| ResultDirError::Io(root.to_path_buf(), e))?;
        let mut dir = ResultDir {
            root: root.to_path_buf(),
            files: Vec::new(),
            unreadable: walk
                .skipped
                .into_iter()
                .map(|s| (s.path, s.problem))
                .collect(),
        };
        for path in walk.files {
            if let Some(kind) = classify(&path) {
                let (rank, process) = place_of(root, &path);
                dir.files.push(Found {
                    path,
                    kind,
                    rank,
                    process,
                });
            }
        }
        dir.files.sort_by(|a, b| {
            (a.rank.is_none(), a.rank, &a.path).cmp(&(b.rank.is_none(), b.rank, &b.path))
        });
        Ok(dir)
    }

    /// The timelines to merge or show, as mergetrace/uniview choose them:
    /// without `ranks` every `chrome_trace.json` below the root, or, only
    /// when there is none, every `chrome_trace.pftrace`; with `ranks`, the
    /// files under a `rank_<r>.` folder of each rank in the given order
    /// (a rank listed twice counts once), again JSON when any of them has
    /// JSON, else pftrace. Files outside `rank_<r>.` folders are found only
    /// without `ranks`.
    pub fn traces(&self, ranks: Option<&[u32]>) -> TraceSelection {
        let pick = |format: TraceFormat| -> Vec<Found> {
            let of_format = |f: &&Found| f.kind == FileKind::Trace(format);
            match ranks {
                None => self.files.iter().filter(of_format).cloned().collect(),
                Some(ranks) => dedup(ranks)
                    .into_iter()
                    .flat_map(|r| {
                        self.files
                            .iter()
                            .filter(of_format)
                            .filter(move |f| f.rank == Some(r))
                    })
                    .cloned()
                    .collect(),
            }
        };
        for format in [TraceFormat::Json, TraceFormat::Pftrace] {
            let files = pick(format);
            if !files.is_empty() {
                let missing_ranks = ranks
                    .map(|rs| {
                        dedup(rs)
                            .into_iter()
                            .filter(|r| !files.iter().any(|f| f.rank == Some(*r)))
                            .collect()
                    })
                    .unwrap_or_default();
                return TraceSelection {
                    format: Some(format),
                    files,
                    missing_ranks,
                };
            }
        }
        TraceSelection {
            format: None,
            files: Vec::new(),
            missing_ranks: ranks.map(dedup).unwrap_or_default(),
        }
    }

    /// Metric / stall CSVs (`metrics/metrics_<n>.csv`) of the given ranks
    /// (all without `ranks`), ordered by rank, then device, then path; each
    /// is one (rank, device) pair, so devices of different ranks never
    /// overwrite each other.
    pub fn metric_files(&self, ranks: Option<&[u32]>) -> Vec<&Found> {
        let mut v: Vec<&Found> = self
            .files
            .iter()
            .filter(|f| matches!(f.kind, FileKind::Metrics { .. }))
            .filter(|f| in_ranks(f, ranks))
            .collect();
        v.sort_by_key(|f| {
            let FileKind::Metrics { device } = f.kind else {
                unreachable!("filtered above")
            };
            (f.rank.is_none(), f.rank, device, f.path.clone())
        });
        v
    }

    /// Text reports of one kind, in rank order.
    pub fn logs(&self, kind: LogKind, ranks: Option<&[u32]>) -> Vec<&Found> {
        self.files
            .iter()
            .filter(|f| f.kind == FileKind::Log(kind) && in_ranks(f, ranks))
            .collect()
    }

    /// Files of any kind, in rank order.
    pub fn of_kind(&self, kind: FileKind) -> impl Iterator<Item = &Found> {
        self.files.iter().filter(move |f| f.kind == kind)
    }

    /// Every rank that has a `rank_<r>.` folder with a recognised file.
    pub fn ranks(&self) -> Vec<u32> {
        let mut r: Vec<u32> = self.files.iter().filter_map(|f| f.rank).collect();
        r.sort_unstable();
        r.dedup();
        r
    }
}

fn in_ranks(f: &Found, ranks: Option<&[u32]>) -> bool {
    ranks.is_none_or(|rs| f.rank.is_some_and(|r| rs.contains(&r)))
}

fn dedup(ranks: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(ranks.len());
    for &r in ranks {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// What the file at `path` is, by name (and the `metrics` folder).
fn classify(path: &Path) -> Option<FileKind> {
    let name = path.file_name()?.to_str()?;
    let kind = match name {
        TRACE_JSON => FileKind::Trace(TraceFormat::Json),
        TRACE_PFTRACE => FileKind::Trace(TraceFormat::Pftrace),
        "run_config.json" => FileKind::RunConfig,
        "oskmd.json" => FileKind::KmdTrace,
        _ => {
            if let Some(kind) = LogKind::ALL.into_iter().find(|k| k.file_name() == name) {
                return Some(FileKind::Log(kind));
            }
            let parent = path.parent()?.file_name()?.to_str()?;
            if parent != "metrics" {
                return None;
            }
            if name == "metrics.csv" {
                return Some(FileKind::Metrics { device: None });
            }
            let n = name.strip_prefix("metrics_")?.strip_suffix(".csv")?;
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            FileKind::Metrics {
                device: Some(n.parse().ok()?),
            }
        }
    };
    Some(kind)
}

/// The rank and process folder of a file below `root`. The rank is the one
/// its path names by the rule of every tool (docs/formats.md#timeline-ranks:
/// the innermost `rank_<r>` folder; folders above `root` say nothing); the
/// process is the innermost `[rank_<r>.]<app>.<pid>` folder.
fn place_of(root: &Path, path: &Path) -> (Option<u32>, Option<ProcessFolder>) {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let rank = rank_from_path(rel).map(|(r, _)| r);
    let mut process = None;
    let folders = rel.parent().into_iter().flat_map(|p| p.components());
    for comp in folders {
        let Some(name) = comp.as_os_str().to_str() else {
            continue;
        };
        let rest = without_rank_prefix(name);
        if let Some((app, pid)) = rest.rsplit_once('.') {
            if !app.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) {
                if let Ok(pid) = pid.parse() {
                    process = Some(ProcessFolder {
                        app: app.to_string(),
                        pid,
                    });
                }
            }
        }
    }
    (rank, process)
}

/// `rank_<r>.rest` -> `rest`; other names as they are.
fn without_rank_prefix(name: &str) -> &str {
    let Some(rest) = name.strip_prefix("rank_") else {
        return name;
    };
    match rest.split_once('.') {
        Some((digits, rest))
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) =>
        {
            rest
        }
        _ => name,
    }
}

/// Parses `--ranks` values: each value is a rank (`2`) or a comma list of
/// ranks and inclusive ranges (`0-3,7`); `--ranks 0 2` and `--ranks 0,2`
/// mean the same. The order is kept (it is the merge order) and repeats
/// are dropped.
pub fn parse_rank_list<I, S>(values: I) -> Result<Vec<u32>, String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = Vec::new();
    for value in values {
        let value = value.as_ref();
        let mut any = false;
        for part in value.split(',').map(str::trim) {
            if part.is_empty() {
                continue;
            }
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (a.trim(), b.trim()),
                None => (part, part),
            };
            let num = |s: &str| -> Result<u32, String> {
                s.parse::<u32>()
                    .map_err(|_| format!("bad rank '{s}' in '{value}'"))
            };
            let (a, b) = (num(a)?, num(b)?);
            if b < a {
                return Err(format!("empty range '{part}'"));
            }
            if b - a > 1 << 20 {
                return Err(format!("rank range '{part}' is too large"));
            }
            for r in a..=b {
                if !out.contains(&r) {
                    out.push(r);
                }
            }
            any = true;
        }
        if !any {
            return Err(format!("no rank in '{value}'"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, b"x").unwrap();
    }

    fn names(files: &[Found]) -> Vec<String> {
        files
            .iter()
            .map(|f| {
                f.path
                    .parent()
                    .unwrap()
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    }

    #[test]
    fn discovers_traces_in_rank_order_json_first() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        for (rank, pid) in [(10, 5), (2, 7), (1, 9), (0, 3)] {
            touch(r, &format!("rank_{rank}.python.{pid}/chrome_trace.json"));
            touch(r, &format!("rank_{rank}.python.{pid}/chrome_trace.pftrace"));
            touch(
                r,
                &format!("rank_{rank}.python.{pid}/metrics/metrics_1.csv"),
            );
            touch(
                r,
                &format!("rank_{rank}.python.{pid}/metrics/metrics_0.csv"),
            );
            touch(
                r,
                &format!("rank_{rank}.unitrace.{}/run_config.json", pid + 1),
            );
        }
        touch(r, "python.77/chrome_trace.pftrace");
        touch(r, "python.77/host_timing.txt");
        let d = ResultDir::open(r).unwrap();
        let all = d.traces(None);
        assert_eq!(all.format, Some(TraceFormat::Json));
        assert_eq!(
            names(&all.files),
            [
                "rank_0.python.3",
                "rank_1.python.9",
                "rank_2.python.7",
                "rank_10.python.5"
            ]
        );
        let some = d.traces(Some(&[2, 1, 2, 4]));
        assert_eq!(names(&some.files), ["rank_2.python.7", "rank_1.python.9"]);
        assert_eq!(some.missing_ranks, [4]);
        // rank_1. is not a prefix of rank_10.
        assert_eq!(names(&d.traces(Some(&[1])).files), ["rank_1.python.9"]);
        assert_eq!(d.ranks(), [0, 1, 2, 10]);
        let m = d.metric_files(Some(&[1, 0]));
        let md: Vec<_> = m
            .iter()
            .map(|f| (f.rank, f.kind, f.process.clone().unwrap().pid))
            .collect();
        assert_eq!(
            md,
            [
                (Some(0), FileKind::Metrics { device: Some(0) }, 3),
                (Some(0), FileKind::Metrics { device: Some(1) }, 3),
                (Some(1), FileKind::Metrics { device: Some(0) }, 9),
                (Some(1), FileKind::Metrics { device: Some(1) }, 9),
            ]
        );
        let logs = d.logs(LogKind::HostTiming, None);
        assert_eq!(logs.len(), 1);
        assert_eq!(logs[0].rank, None);
        assert_eq!(d.of_kind(FileKind::RunConfig).count(), 4);
    }

    #[test]
    fn pftrace_when_no_json_and_empty_results() {
        let t = tempfile::tempdir().unwrap();
        let r = t.path();
        touch(r, "rank_1.a.2/chrome_trace.pftrace");
        touch(r, "rank_0.a.1/chrome_trace.pftrace");
        touch(r, "a.3/chrome_trace.pftrace");
        let d = ResultDir::open(r).unwrap();
        let s = d.traces(None);
        assert_eq!(s.format, Some(TraceFormat::Pftrace));
        assert_eq!(names(&s.files), ["rank_0.a.1", "rank_1.a.2", "a.3"]);
        let s = d.traces(Some(&[5]));
        assert_eq!(s.format, None);
        assert_eq!(s.missing_ranks, [5]);
        let e = ResultDir::open(&r.join("nope")).unwrap_err();
        assert!(
            e.to_string().starts_with("Directory '") && e.to_string().ends_with("' does not exist")
        );
        let e = ResultDir::open(&r.join("a.3/chrome_trace.pftrace")).unwrap_err();
        assert!(e.to_string().ends_with("' is not a directory"));
    }

    #[test]
    fn ranks_follow_the_one_rank_rule() {
        // docs/formats.md#timeline-ranks: the innermost `rank_<r>` folder
        // below the root, whatever follows the number; the root's own
        // folders say nothing.
        let t = tempfile::tempdir().unwrap();
        let r = t.path().join("rank_9.outer");
        touch(&r, "rank_01.a.1/chrome_trace.json");
        touch(&r, "rank_3/a.4/chrome_trace.json");
        touch(&r, "rank_5.a.6/rank_7.b.8/chrome_trace.json");
        touch(&r, "a.2/chrome_trace.json");
        let d = ResultDir::open(&r).unwrap();
        let placed: Vec<_> = d
            .files
            .iter()
            .map(|f| (f.rank, f.process.clone().map(|p| (p.app, p.pid))))
            .collect();
        assert_eq!(
            placed,
            [
                (Some(1), Some(("a".to_string(), 1))),
                (Some(3), Some(("a".to_string(), 4))),
                (Some(7), Some(("b".to_string(), 8))),
                (None, Some(("a".to_string(), 2))),
            ]
        );
        assert_eq!(names(&d.traces(Some(&[3])).files), ["a.4"]);
    }

    #[test]
    fn rank_lists() {
        assert_eq!(parse_rank_list(["0-3,7"]).unwrap(), [0, 1, 2, 3, 7]);
        assert_eq!(parse_rank_list(["2", "0", "2"]).unwrap(), [2, 0]);
        assert!(parse_rank_list(["3-1"]).is_err());
        assert!(parse_rank_list(["x"]).is_err());
        assert!(parse_rank_list([""]).is_err());
        assert!(parse_rank_list(["-1"]).is_err());
        assert_eq!(without_rank_prefix("rank_0.a.1"), "a.1");
        assert_eq!(without_rank_prefix("rank_x.a.1"), "rank_x.a.1");
    }
}
