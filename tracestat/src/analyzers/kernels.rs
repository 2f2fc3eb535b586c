//! The kernel breakdown (docs/tracestat.md#kernels): per category and per
//! kernel (name without its launch shape) over all ranks, count, total,
//! mean and mergeable percentiles of the durations, share of all device
//! time, and the spread of the per-rank totals (least, median, most rank),
//! which is where a straggling kernel shows; and the innermost host range
//! each kernel ran under most (where in the program it was launched).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as FastMap;
use serde::{Deserialize, Serialize};
use unitrace_core::timeline::NameId;
use unitrace_render::sections::{Column, Section, Table, Unit, Value};

use super::{median, Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::classify::{Class, KernelKind};
use crate::labels::{self, Label};
use crate::rank_model::RankModel;
use crate::sketch::DurationSketch;
use crate::time::{pct, us, Ns};

/// At most this many kernel rows on screen.
const TOP: usize = 15;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelAgg {
    /// Labels shared by every rank, not a copy per rank
    /// (docs/tracestat.md#many-ranks).
    #[serde(deserialize_with = "labels::deserialize_one")]
    pub category: Label,
    #[serde(deserialize_with = "labels::deserialize_one")]
    pub name: Label,
    pub class: Class,
    pub count: u64,
    pub total_ns: Ns,
    pub durations: DurationSketch,
    /// The innermost host range enclosing the submission of most of this
    /// kernel's device time on this rank ([`NO_RANGE`] for time submitted
    /// outside any range or without a submission link), and that time.
    /// Absent from partials written before it was kept.
    #[serde(default, deserialize_with = "labels::deserialize_one")]
    pub host_range: Label,
    #[serde(default)]
    pub host_range_ns: Ns,
}

/// The host range of kernels submitted outside any range, or whose
/// submission is not known.
pub const NO_RANGE: &str = "(none)";

#[derive(Debug, Clone, Serialize)]
pub struct KernelRow {
    pub category: String,
    /// Empty in the category table.
    pub name: String,
    pub class: Class,
    pub count: u64,
    pub total_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p95_us: f64,
    pub max_us: f64,
    pub share_pct: f64,
    pub ranks: usize,
    pub rank_min: String,
    pub rank_min_us: f64,
    pub rank_median_us: f64,
    pub rank_max: String,
    pub rank_max_us: f64,
    /// Kernel rows: the host range with the most of the kernel's device
    /// time, summed over the ranks where it was the rank's top range.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub host_range: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct KernelsOut {
    pub categories: Vec<KernelRow>,
    pub kernels: Vec<KernelRow>,
}

pub struct Kernels;

impl Analyzer for Kernels {
    type Rank = Vec<KernelAgg>;
    type Output = KernelsOut;

    fn observe(m: &RankModel<'_>, _: &RankOptions) -> Self::Rank {
        let mut agg_index: FastMap<(Label, Label), usize> = FastMap::default();
        // (name id, class) -> row: several names may share a row.
        let mut agg_by_id: FastMap<(NameId, Class), usize> = FastMap::default();
        let mut aggs: Vec<(KernelAgg, Vec<Ns>)> = Vec::new();
        // (row, innermost range) -> device time.
        let mut by_range: FastMap<(usize, Option<NameId>), Ns> = FastMap::default();
        for ((k, &class), path) in m
            .trace
            .kernels
            .iter()
            .zip(&m.classes)
            .zip(m.enclosing.iter())
        {
            let kind = &m.kinds[k.name.index()];
            let j = match agg_by_id.get(&(k.name, class)) {
                Some(&j) => j,
                None => {
                    let key = (
                        labels::label(&category(kind, class)),
                        labels::label(&kind.short_name),
                    );
                    let j = *agg_index.entry(key.clone()).or_insert_with(|| {
                        aggs.push((
                            KernelAgg {
                                category: key.0.clone(),
                                name: key.1.clone(),
                                class,
                                count: 0,
                                total_ns: 0,
                                durations: DurationSketch::default(),
                                host_range: Label::default(),
                                host_range_ns: 0,
                            },
                            Vec::new(),
                        ));
                        aggs.len() - 1
                    });
                    agg_by_id.insert((k.name, class), j);
                    j
                }
            };
            aggs[j].0.count += 1;
            aggs[j].0.total_ns += k.end - k.start;
            aggs[j].1.push(k.end - k.start);
            let innermost = path.and_then(|p| p.last().copied());
            *by_range.entry((j, innermost)).or_default() += k.end - k.start;
        }
        for ((j, range), ns) in by_range {
            let name = range.map_or(NO_RANGE, |r| m.name(r));
            let agg = &mut aggs[j].0;
            if is_top_range((name, ns), (&agg.host_range, agg.host_range_ns)) {
                agg.host_range = labels::label(name);
                agg.host_range_ns = ns;
            }
        }
        let mut kernels: Vec<KernelAgg> = aggs
            .into_iter()
            .map(|(mut a, mut d)| {
                a.durations = DurationSketch::from_values(&mut d);
                a
            })
            .collect();
        kernels.sort_by(|a, b| (&a.category, &a.name).cmp(&(&b.category, &b.name)));
        kernels
    }

    fn part(rank: &RankSummary) -> &Self::Rank {
        &rank.parts.kernels
    }

    fn finish(ranks: &Ranks<'_>, _: &Finished) -> KernelsOut {
        let (categories, kernels) = kernel_tables(ranks);
        KernelsOut {
            categories,
            kernels,
        }
    }

    fn sections(r: &Report, _: &Screen) -> Vec<Section> {
        let out = &r.out.kernels;
        let mut c = Section::new("categories", "Kernel time by category (all ranks)");
        c.tables.push(table("categories", &out.categories, false));
        let mut k = Section::new(
            "kernels",
            "Top kernels (all ranks; rank spread = min/median/max of the per-rank totals)",
        );
        k.tables.push(table("kernels", &out.kernels, true));
        vec![c, k]
    }
}

/// Whether `(range, ns)` beats the top range so far: more time, then the
/// first name (an empty name is no range yet).
fn is_top_range(candidate: (&str, Ns), top: (&str, Ns)) -> bool {
    top.0.is_empty() || candidate.1 > top.1 || (candidate.1 == top.1 && candidate.0 < top.0)
}

/// Without a schema the category of a kernel is its final class (a memory
/// copy inside a collective is communication).
fn category(kind: &KernelKind, class: Class) -> String {
    let no_schema = Class::ALL.iter().any(|c| c.name() == kind.category);
    if kind.class.is_none() && no_schema {
        class.name().to_string()
    } else {
        kind.category.clone()
    }
}

struct Acc {
    class: Class,
    count: u64,
    total: Ns,
    sketch: DurationSketch,
    per_rank: Vec<(usize, Ns)>,
    /// Top host range of each rank -> its time, summed over the ranks.
    ranges: BTreeMap<Label, Ns>,
}

impl Acc {
    fn new(class: Class) -> Acc {
        Acc {
            class,
            count: 0,
            total: 0,
            sketch: DurationSketch::default(),
            per_rank: Vec::new(),
            ranges: BTreeMap::new(),
        }
    }

    fn add(&mut self, k: &KernelAgg) {
        self.count += k.count;
        self.total += k.total_ns;
        self.sketch.merge(&k.durations);
        if !k.host_range.is_empty() {
            *self.ranges.entry(k.host_range.clone()).or_default() += k.host_range_ns;
        }
    }

    /// The range with the most time ([`is_top_range`]).
    fn top_range(&self) -> String {
        let mut top: (&str, Ns) = ("", 0);
        for (name, &ns) in &self.ranges {
            if is_top_range((name, ns), top) {
                top = (name, ns);
            }
        }
        top.0.to_string()
    }
}

/// Per-category and per-kernel tables over all ranks.
fn kernel_tables(ranks: &Ranks<'_>) -> (Vec<KernelRow>, Vec<KernelRow>) {
    let mut kernels: BTreeMap<(Label, Label), Acc> = BTreeMap::new();
    let mut cats: BTreeMap<Label, Acc> = BTreeMap::new();
    let mut grand: Ns = 0;
    for (i, r) in ranks.ranks.iter().enumerate() {
        let mut cat_rank: BTreeMap<&str, Ns> = BTreeMap::new();
        for k in Kernels::part(r) {
            grand += k.total_ns;
            let a = kernels
                .entry((k.category.clone(), k.name.clone()))
                .or_insert_with(|| Acc::new(k.class));
            a.add(k);
            a.per_rank.push((i, k.total_ns));
            cats.entry(k.category.clone())
                .or_insert_with(|| Acc::new(k.class))
                .add(k);
            *cat_rank.entry(&k.category).or_default() += k.total_ns;
        }
        for (c, t) in cat_rank {
            if let Some(a) = cats.get_mut(c) {
                a.per_rank.push((i, t));
            }
        }
    }
    let row = |category: String, name: String, a: Acc| {
        // Categories have no host range of their own.
        let host_range = if name.is_empty() {
            String::new()
        } else {
            a.top_range()
        };
        let mut per = a.per_rank.clone();
        // Lowest total first; ties by rank order.
        per.sort_by(|x, y| x.1.cmp(&y.1).then(x.0.cmp(&y.0)));
        let mut vals: Vec<f64> = per.iter().map(|p| us(p.1)).collect();
        let (lo, hi) = (per.first().copied(), per.last().copied());
        KernelRow {
            category,
            name,
            class: a.class,
            count: a.count,
            total_us: us(a.total),
            mean_us: if a.count > 0 {
                us(a.total) / a.count as f64
            } else {
                0.0
            },
            p50_us: a.sketch.quantile(0.5) / 1e3,
            p95_us: a.sketch.quantile(0.95) / 1e3,
            max_us: us(a.sketch.max),
            share_pct: pct(a.total as f64, grand as f64),
            ranks: per.len(),
            rank_min: lo.map(|p| ranks.labels[p.0].clone()).unwrap_or_default(),
            rank_min_us: lo.map_or(0.0, |p| us(p.1)),
            rank_median_us: median(&mut vals),
            rank_max: hi.map(|p| ranks.labels[p.0].clone()).unwrap_or_default(),
            rank_max_us: hi.map_or(0.0, |p| us(p.1)),
            host_range,
        }
    };
    let mut k: Vec<KernelRow> = kernels
        .into_iter()
        .map(|((c, n), a)| row(c.to_string(), n.to_string(), a))
        .collect();
    let mut c: Vec<KernelRow> = cats
        .into_iter()
        .map(|(c, a)| row(c.to_string(), String::new(), a))
        .collect();
    let by_total = |a: &KernelRow, b: &KernelRow| {
        b.total_us
            .total_cmp(&a.total_us)
            .then_with(|| (&a.category, &a.name).cmp(&(&b.category, &b.name)))
    };
    k.sort_by(by_total);
    c.sort_by(by_total);
    (c, k)
}

fn table(file: &str, rows: &[KernelRow], per_kernel: bool) -> Table {
    let mut columns = vec![
        Column::new("category", "category", Unit::Text).files_only(),
        Column::new("kernel", "kernel", Unit::Text).files_only(),
        Column::new("class", "class", Unit::Text).files_only(),
        Column::new("count", "count", Unit::Count),
        Column::new("total_us", "total", Unit::Us),
        Column::new("mean_us", "mean", Unit::Us),
        Column::new("p50_us", "p50", Unit::Us),
        Column::new("p95_us", "p95", Unit::Us),
        Column::new("max_us", "max", Unit::Us),
        Column::new("share_pct", "share", Unit::Pct),
        Column::new("ranks", "ranks", Unit::Count).files_only(),
        Column::new("rank_min", "rank min", Unit::Text).files_only(),
        Column::new("rank_min_us", "rank min", Unit::Us).files_only(),
        Column::new("rank_median_us", "rank median", Unit::Us).files_only(),
        Column::new("rank_max", "rank max", Unit::Text).files_only(),
        Column::new("rank_max_us", "rank max", Unit::Us).files_only(),
    ];
    if per_kernel {
        columns.push(Column::new("host_range", "host range", Unit::Text).files_only());
        columns.push(Column::new("spread", "rank min/med/max (ms)", Unit::Text).screen_only());
        // Demangled names run to hundreds of characters: the page folds
        // them (docs/tracestat.md#html-page).
        columns.push(
            Column::new("label", "kernel [category]", Unit::Text)
                .screen_only()
                .long_names(),
        );
    } else {
        columns.push(Column::new("label", "category", Unit::Text).screen_only());
    }
    let mut t = Table::new(file, "", columns);
    for k in rows {
        let mut row: Vec<Value> = vec![
            Value::from(&k.category),
            Value::from(&k.name),
            k.class.name().into(),
            k.count.into(),
            k.total_us.into(),
            k.mean_us.into(),
            k.p50_us.into(),
            k.p95_us.into(),
            k.max_us.into(),
            k.share_pct.into(),
            k.ranks.into(),
            Value::from(&k.rank_min),
            k.rank_min_us.into(),
            k.rank_median_us.into(),
            Value::from(&k.rank_max),
            k.rank_max_us.into(),
        ];
        if per_kernel {
            row.push(Value::from(&k.host_range));
            row.push(
                format!(
                    "{}:{:.2}/{:.2}/{}:{:.2}",
                    k.rank_min,
                    k.rank_min_us / 1e3,
                    k.rank_median_us / 1e3,
                    k.rank_max,
                    k.rank_max_us / 1e3
                )
                .into(),
            );
            row.push(format!("{} [{}]", k.name, k.category).into());
        } else {
            row.push(Value::from(&k.category));
        }
        t.push(row);
    }
    if t.rows.len() > TOP {
        t.show_only(
            (0..TOP).collect(),
            format!("({} of {} rows; all in --csv/--json)", TOP, t.rows.len()),
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use unitrace_core::timeline;

    use super::super::{build, summarize, RankParts, ReportOptions};
    use super::*;
    use crate::classify::Classifier;
    use crate::ingest::FileCollector;

    fn options() -> RankOptions {
        RankOptions {
            short_kernel_ns: 10_000,
            tree_depth: 0,
            heat_resolution: 16,
            schema: None,
            window: None,
            steps: Default::default(),
            what_if: Vec::new(),
            annotate: false,
            no_critical_path: false,
        }
    }

    fn report_options() -> ReportOptions {
        ReportOptions {
            bins: 1,
            heat_rows: super::super::heatmap::MAX_HEAT_ROWS,
            align: super::super::clocks::Align::None,
        }
    }

    /// One rank's summary of a trace given as JSON text.
    fn summary(trace: &str, input_index: usize) -> RankSummary {
        let path = Path::new("t.json");
        let mut collector = FileCollector::new("t.json");
        let read = timeline::read_bytes(trace.as_bytes(), path, collector.sink()).unwrap();
        let mut ranks = collector.finish(read, input_index);
        assert_eq!(ranks.len(), 1);
        let mut classifier = Classifier::new(None);
        summarize(ranks.remove(0), &mut classifier, &options())
    }

    /// Two kernel instances of one name (two launch shapes) submitted
    /// under nested host ranges (an `X` outer, a `B`/`E` inner), and one
    /// kernel without a submission link.
    const NESTED: &str = r#"{"traceEvents":[
{"ph": "X", "tid": 1, "pid": 1, "name": "PyTorch::aten::linear", "cat": "cpu_op", "ts": 100.0, "dur": 50.0},
{"ph": "B", "tid": 1, "pid": 1, "name": "dnnl::primitive::execute::matmul", "cat": "cpu_op", "ts": 110.0},
{"ph": "s", "tid": 1, "pid": 1, "name": "dep", "cat": "Flow_H2D_1_0", "ts": 111.0, "id": 1},
{"ph": "E", "tid": 1, "pid": 1, "name": "dnnl::primitive::execute::matmul", "cat": "cpu_op", "ts": 120.0},
{"ph": "s", "tid": 1, "pid": 1, "name": "dep", "cat": "Flow_H2D_2_0", "ts": 130.0, "id": 2},
{"ph": "X", "tid": 9, "pid": 9, "name": "gemm[SIMD8 {1; 1; 1} {64; 1; 1}]", "cat": "gpu_op", "ts": 200.0, "dur": 10.0, "args": {"id": "1"}},
{"ph": "X", "tid": 8, "pid": 9, "name": "gemm[SIMD8 {2; 1; 1} {64; 1; 1}]", "cat": "gpu_op", "ts": 205.0, "dur": 30.0, "args": {"id": "2"}},
{"ph": "X", "tid": 9, "pid": 9, "name": "copy", "cat": "gpu_op", "ts": 300.0, "dur": 20.0, "args": {"id": "3"}}
]}"#;

    /// Two ranks hold one allocation per kernel, category and range
    /// name, whether observed or read back from a partial's JSON
    /// (docs/tracestat.md#many-ranks).
    #[test]
    fn ranks_share_their_kernel_and_range_names() {
        let (a, b) = (summary(NESTED, 0).parts, summary(NESTED, 1).parts);
        let shared = |x: &Label, y: &Label| std::sync::Arc::ptr_eq(x, y);
        let read = |k: &KernelAgg| -> KernelAgg {
            serde_json::from_str(&serde_json::to_string(k).unwrap()).unwrap()
        };
        assert_eq!(a.kernels.len(), 2);
        for (x, y) in a.kernels.iter().zip(&b.kernels) {
            assert_eq!(&*x.name, &*y.name);
            assert!(shared(&x.name, &y.name) && shared(&x.category, &y.category));
            assert!(x.host_range.is_empty() || shared(&x.host_range, &y.host_range));
            let back = read(x);
            assert_eq!(&back, x);
            assert!(shared(&back.name, &x.name) && shared(&back.category, &x.category));
        }
        let (ra, rb) = (&a.host_ranges.host_ranges, &b.host_ranges.host_ranges);
        assert!(!ra.is_empty());
        for (x, y) in ra.iter().zip(rb) {
            assert!(shared(&x.name, &y.name), "{}", x.name);
        }
    }

    #[test]
    fn each_kernel_keeps_the_innermost_range_of_most_of_its_time() {
        let kernels = summary(NESTED, 0).parts.kernels;
        let of = |name: &str| kernels.iter().find(|k| &*k.name == name).unwrap();
        // gemm: 10 us submitted inside the oneDNN range (innermost), 30 us
        // inside the PyTorch op only (the oneDNN range ended at 120).
        let gemm = of("gemm");
        assert_eq!((gemm.count, gemm.total_ns), (2, 40_000));
        assert_eq!(
            (&*gemm.host_range, gemm.host_range_ns),
            ("PyTorch::aten::linear", 30_000)
        );
        // No submission link: no range.
        let copy = of("copy");
        assert_eq!((&*copy.host_range, copy.host_range_ns), (NO_RANGE, 20_000));
    }

    #[test]
    fn across_ranks_the_range_with_the_most_time_wins() {
        let agg = |range: &str, ns: Ns, total_ns: Ns| KernelAgg {
            category: "compute".into(),
            name: "gemm".into(),
            class: Class::Compute,
            count: 1,
            total_ns,
            durations: DurationSketch::from_values(&mut [total_ns]),
            host_range: range.into(),
            host_range_ns: ns,
        };
        let rank = |i: usize, kernels: Vec<KernelAgg>| RankSummary {
            rank: Some(i as u32),
            input_index: i,
            file: format!("r{i}.json"),
            truncated: None,
            trailing_data_line: None,
            warnings: Vec::new(),
            first_ns: 0,
            last_ns: 0,
            parts: RankParts {
                kernels,
                ..RankParts::default()
            },
        };
        // "b" is the top range of two ranks (30 + 30 us), "a" of one
        // (50 us): "b" wins; the category row has no range.
        let ranks = vec![
            rank(0, vec![agg("a", 50_000, 60_000)]),
            rank(1, vec![agg("b", 30_000, 40_000)]),
            rank(2, vec![agg("b", 30_000, 40_000)]),
        ];
        let report = build(ranks, options(), &report_options());
        let out = &report.out.kernels;
        assert_eq!(out.kernels[0].host_range, "b");
        assert_eq!(out.categories[0].host_range, "");
        // A tie goes to the first name.
        let ranks = vec![
            rank(0, vec![agg("b", 30_000, 30_000)]),
            rank(1, vec![agg("a", 30_000, 30_000)]),
        ];
        let report = build(ranks, options(), &report_options());
        assert_eq!(report.out.kernels.kernels[0].host_range, "a");
        // The files hold it; the screens do not.
        let json = serde_json::to_value(&report.out.kernels).unwrap();
        assert_eq!(json["kernels"][0]["host_range"], "a");
        assert!(json["categories"][0].get("host_range").is_none());
    }

    #[test]
    fn partials_without_host_ranges_still_read() {
        let old = r#"{"category": "compute", "name": "gemm", "class": "compute",
            "count": 1, "total_ns": 5,
            "durations": {"zeros": 0, "buckets": [], "min": 5, "max": 5, "count": 1}}"#;
        let k: KernelAgg = serde_json::from_str(old).unwrap();
        assert_eq!((&*k.host_range, k.host_range_ns), ("", 0));
    }
}
