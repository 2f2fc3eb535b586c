//! The analyses of tracestat, one module each behind one trait
//! (docs/tracestat.md#analyzers): an [`Analyzer`] observes one rank's
//! prepared timeline ([`RankModel`]) and keeps a small serialisable part
//! (all that `--partial` carries across machines), then finishes the parts
//! of every rank into its share of the report and lays that out as
//! [`Section`]s of the shared table model, which the console, the CSV and
//! Parquet files and the HTML page all write.
//!
//! Adding an analysis: a module here implementing [`Analyzer`], and one
//! line in [`registry!`]'s invocation below. Analyses finish in registry
//! order; one that needs another's result reads it from [`Finished`].

pub mod breakdown;
pub mod clocks;
pub mod collectives;
pub mod copies;
pub mod critical_path;
pub mod findings;
pub mod gaps;
pub mod heatmap;
pub mod host_ranges;
pub mod inputs;
pub mod kernels;
pub mod launches;
pub mod setup_calls;
pub mod steps;
pub mod stragglers;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use unitrace_render::sections::Section;

use crate::classify::Classifier;
use crate::ingest::RankTrace;
use crate::rank_model::{with_model, RankModel};
use crate::step_windows::StepOptions;
use crate::time::Ns;

/// Options that change per-rank numbers (they must agree between the
/// partials that `--combine` reduces).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankOptions {
    /// Kernels shorter than this are "short" (`--short-kernel`).
    pub short_kernel_ns: Ns,
    /// Depth of the op -> kernel tree (`--tree`), 0 for none.
    pub tree_depth: usize,
    /// Fine heatmap bins per rank wall time (before the `--bins` reduction).
    pub heat_resolution: u32,
    /// Name of the `--schema` file, if any (for the combine check).
    pub schema: Option<String>,
    /// `--from`/`--to`: only this stretch of each rank, as offsets from its
    /// first event (docs/tracestat.md#windows).
    #[serde(default)]
    pub window: Option<(Ns, Ns)>,
    /// `--step`, `--steps`, `--skip-warmup` (docs/tracestat.md#steps).
    #[serde(default)]
    pub steps: StepOptions,
    /// `--what-if` rules, as written (docs/tracestat.md#what-if): each
    /// rank's reduced steps carry the chain lengths under them.
    #[serde(default)]
    pub what_if: Vec<String>,
    /// `--annotate`: keep each engine's queue depth (never in a partial).
    #[serde(skip)]
    pub annotate: bool,
    /// `--no-critical-path`: no rank's graph is built, the run has no path
    /// (written only when set, so reports without it are as before).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_critical_path: bool,
}

/// Options of the cross-rank step.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// Heatmap columns (`--bins`).
    pub bins: usize,
    /// Most rows of the heatmap table (`--heat-rows`): more ranks are
    /// grouped (docs/tracestat.md#heatmap).
    pub heat_rows: usize,
    /// How ranks' clocks are lined up (`--align`).
    pub align: clocks::Align,
}

/// The ranks as every analysis sees them when it finishes: in report
/// order, with their labels.
pub struct Ranks<'a> {
    pub ranks: &'a [RankSummary],
    pub labels: Vec<String>,
    pub options: &'a ReportOptions,
    pub rank_options: &'a RankOptions,
}

impl Ranks<'_> {
    /// The earliest first event of the ranks that have a time span: the
    /// origin of report times.
    pub fn origin(&self) -> Ns {
        self.ranks
            .iter()
            .filter(|r| r.last_ns > r.first_ns)
            .map(|r| r.first_ns)
            .min()
            .unwrap_or(0)
    }
}

/// One analysis.
pub trait Analyzer {
    /// What the analysis keeps of one rank.
    type Rank: Serialize + DeserializeOwned + Clone + std::fmt::Debug + PartialEq + Default;
    /// Its share of the report (flattened into the report's JSON).
    type Output: Serialize + Clone + std::fmt::Debug;

    /// One rank's part, from its prepared timeline.
    fn observe(rank: &RankModel<'_>, options: &RankOptions) -> Self::Rank;

    /// The part of one rank, from its summary.
    fn part(rank: &RankSummary) -> &Self::Rank;

    /// Every rank's part into the analysis' result; `done` holds the
    /// results of the analyses before it in the registry.
    fn finish(ranks: &Ranks<'_>, done: &Finished) -> Self::Output;

    /// The analysis' sections of the report.
    fn sections(report: &Report, screen: &Screen) -> Vec<Section>;
}

/// How the screen outputs (console, page) are cut down; files hold all.
#[derive(Debug, Clone)]
pub struct Screen {
    /// The ranks the per-rank tables show (`--rank-rows`).
    pub ranks: crate::rank_rows::Shown,
    /// `--rank-rows` (`None`: all).
    pub rank_rows: Option<usize>,
}

impl Screen {
    /// Whether the cap leaves nothing out of `report`: every rank shown
    /// and every truncated input listed (the only list [`inputs`] caps by
    /// `rank_rows` itself). The sections are then those of the files,
    /// built once for both (`tracestat::write_report`; test
    /// `sections_a_cap_leaves_nothing_out_of_are_the_files`).
    pub fn cuts_nothing(&self, report: &Report) -> bool {
        let truncated = report.out.inputs.truncated.len();
        !self.ranks.is_capped() && self.rank_rows.is_none_or(|cap| cap >= truncated)
    }
}

/// Declares the analyses: the per-rank parts, the results, and the steps
/// that run each of them in order.
macro_rules! registry {
    ($( $field:ident : $ty:ty ),* $(,)?) => {
        /// What every analysis keeps of one rank (a part missing from an
        /// older partial reads as the analysis' default).
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        pub struct RankParts {
            $( #[serde(default)] pub $field: <$ty as Analyzer>::Rank, )*
        }

        /// The analyses' results.
        #[derive(Debug, Clone, Serialize)]
        pub struct Outputs {
            $( #[serde(flatten)] pub $field: <$ty as Analyzer>::Output, )*
        }

        /// The results of the analyses finished so far.
        #[derive(Default)]
        pub struct Finished {
            $( pub $field: Option<<$ty as Analyzer>::Output>, )*
        }

        /// Observes one rank with every analysis.
        pub fn observe_all(model: &RankModel<'_>, options: &RankOptions) -> RankParts {
            RankParts { $( $field: <$ty>::observe(model, options), )* }
        }

        /// Finishes every analysis, in registry order.
        pub fn finish_all(ranks: &Ranks<'_>) -> Outputs {
            let mut done = Finished::default();
            $( done.$field = Some(<$ty>::finish(ranks, &done)); )*
            Outputs {
                $( $field: done.$field.take().expect("each analysis finishes once"), )*
            }
        }

        /// The sections of every analysis, in registry order.
        pub fn sections_all(report: &Report, screen: &Screen) -> Vec<Section> {
            let mut out = Vec::new();
            $( out.extend(<$ty>::sections(report, screen)); )*
            out
        }
    };
}

registry! {
    breakdown: breakdown::Breakdown,
    gaps: gaps::Gaps,
    launches: launches::Launches,
    host_ranges: host_ranges::HostRanges,
    collectives: collectives::Collectives,
    stragglers: stragglers::Stragglers,
    kernels: kernels::Kernels,
    copies: copies::Copies,
    setup_calls: setup_calls::SetupCalls,
    heatmap: heatmap::Heatmap,
    critical_path: critical_path::CriticalPath,
    inputs: inputs::Inputs,
    steps: steps::Steps,
    findings: findings::Findings,
}

/// One rank after every analysis observed it: its identity and their
/// parts. The intervals it came from are gone; this is what a `--partial`
/// file holds per rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    pub rank: Option<u32>,
    pub input_index: usize,
    pub file: String,
    pub truncated: Option<String>,
    /// Not part of the report (nor of a partial): the warning about data
    /// after the trace's end is given by the run that read the file.
    #[serde(skip)]
    pub trailing_data_line: Option<u64>,
    /// Not part of the report either: the file's other warnings
    /// ([`crate::ingest::RankTrace::warnings`]).
    #[serde(skip)]
    pub warnings: Vec<String>,
    /// The rank's first and last event (0, 0 without a time span).
    pub first_ns: Ns,
    pub last_ns: Ns,
    #[serde(flatten)]
    pub parts: RankParts,
}

impl RankSummary {
    /// The rank's label: its id, or `#<input position>` without one.
    pub fn label(&self) -> String {
        match self.rank {
            Some(r) => r.to_string(),
            None => format!("#{}", self.input_index),
        }
    }

    pub fn wall_ns(&self) -> Ns {
        if self.last_ns > self.first_ns {
            self.last_ns - self.first_ns
        } else {
            0
        }
    }
}

/// The whole report: its JSON is this, serialised.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub tool: &'static str,
    pub ranks: usize,
    pub options: RankOptions,
    pub bins: usize,
    #[serde(flatten)]
    pub out: Outputs,
}

/// Ranks in report order: by rank id, rank-less inputs last by input.
/// Two inputs of one rank (a warning) go by file name, not by input
/// position, which differs between one run and the partials of `--combine`.
pub fn sort_ranks(ranks: &mut [RankSummary]) {
    let key = |r: &RankSummary| {
        let file = if r.rank.is_some() {
            r.file.clone()
        } else {
            String::new()
        };
        (r.rank.is_none(), r.rank, file, r.input_index)
    };
    ranks.sort_by_cached_key(key);
}

/// The cross-rank step: every rank's summary in, the report out. A single
/// run and `--combine` over partials both end here with the same
/// summaries, so they give the same report.
pub fn build(mut ranks: Vec<RankSummary>, options: RankOptions, report: &ReportOptions) -> Report {
    sort_ranks(&mut ranks);
    let labels = ranks.iter().map(RankSummary::label).collect();
    let view = Ranks {
        ranks: &ranks,
        labels,
        options: report,
        rank_options: &options,
    };
    let out = finish_all(&view);
    Report {
        tool: "tracestat",
        ranks: ranks.len(),
        options,
        bins: report.bins,
        out,
    }
}

/// The median of some values (the mean of the middle two for an even
/// count; 0 for none).
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// `value` against `reference`, in percent (0 without a reference).
pub fn vs(value: f64, reference: f64) -> f64 {
    if reference > 0.0 {
        100.0 * (value - reference) / reference
    } else {
        0.0
    }
}

/// Turns one rank's intervals into its summary: prepared once, observed by
/// every analysis, the intervals dropped.
pub fn summarize(
    trace: RankTrace,
    classifier: &mut Classifier<'_>,
    opts: &RankOptions,
) -> RankSummary {
    let mut trace = match opts.window {
        Some(w) => crate::rank_model::clip_to_window(trace, w),
        None => trace,
    };
    // The rank's intervals are held while every analysis looks at them:
    // without the slack their growth left (up to half of each list), which
    // counts towards the peak memory (docs/tracestat.md#scale).
    trace.kernels.shrink_to_fit();
    trace.host.shrink_to_fit();
    trace.api.shrink_to_fit();
    trace.flows.shrink_to_fit();
    for cover in &mut trace.host_cover {
        cover.shrink_to_fit();
    }
    let (trace, steps) = steps::restrict(trace, &opts.steps);
    let (trace, (first, last, parts)) = with_model(trace, classifier, &steps, |m| {
        (m.first, m.last, observe_all(m, opts))
    });
    RankSummary {
        rank: trace.rank,
        input_index: trace.input_index,
        file: trace.file,
        truncated: trace.truncated,
        trailing_data_line: trace.trailing_data_line,
        warnings: trace.warnings,
        first_ns: first,
        last_ns: last,
        parts,
    }
}
