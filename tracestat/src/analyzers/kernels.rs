//! The kernel breakdown (docs/tracestat.md#kernels): per category and per
//! kernel (name without its launch shape) over all ranks, count, total,
//! mean and mergeable percentiles of the durations, share of all device
//! time, and the spread of the per-rank totals (least, median, most rank),
//! which is where a straggling kernel shows.

use std::collections::{BTreeMap, HashMap};

use rustc_hash::FxHashMap as FastMap;
use serde::{Deserialize, Serialize};
use unitrace_core::timeline::NameId;
use unitrace_render::sections::{Column, Section, Table, Unit, Value};

use super::{median, Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::classify::{Class, KernelKind};
use crate::rank_model::RankModel;
use crate::sketch::DurationSketch;
use crate::time::{pct, us, Ns};

/// At most this many kernel rows on screen.
const TOP: usize = 15;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelAgg {
    pub category: String,
    pub name: String,
    pub class: Class,
    pub count: u64,
    pub total_ns: Ns,
    pub durations: DurationSketch,
}

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
        let mut agg_index: HashMap<(String, String), usize> = HashMap::new();
        // (name id, class) -> row: several names may share a row.
        let mut agg_by_id: FastMap<(NameId, Class), usize> = FastMap::default();
        let mut aggs: Vec<(KernelAgg, Vec<Ns>)> = Vec::new();
        for (k, &class) in m.trace.kernels.iter().zip(&m.classes) {
            let kind = &m.kinds[k.name.index()];
            let j = match agg_by_id.get(&(k.name, class)) {
                Some(&j) => j,
                None => {
                    let key = (category(kind, class), kind.short_name.clone());
                    let j = *agg_index.entry(key.clone()).or_insert_with(|| {
                        aggs.push((
                            KernelAgg {
                                category: key.0.clone(),
                                name: key.1.clone(),
                                class,
                                count: 0,
                                total_ns: 0,
                                durations: DurationSketch::default(),
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
}

impl Acc {
    fn new(class: Class) -> Acc {
        Acc {
            class,
            count: 0,
            total: 0,
            sketch: DurationSketch::default(),
            per_rank: Vec::new(),
        }
    }

    fn add(&mut self, k: &KernelAgg) {
        self.count += k.count;
        self.total += k.total_ns;
        self.sketch.merge(&k.durations);
    }
}

/// Per-category and per-kernel tables over all ranks.
fn kernel_tables(ranks: &Ranks<'_>) -> (Vec<KernelRow>, Vec<KernelRow>) {
    let mut kernels: BTreeMap<(String, String), Acc> = BTreeMap::new();
    let mut cats: BTreeMap<String, Acc> = BTreeMap::new();
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
        }
    };
    let mut k: Vec<KernelRow> = kernels
        .into_iter()
        .map(|((c, n), a)| row(c, n, a))
        .collect();
    let mut c: Vec<KernelRow> = cats
        .into_iter()
        .map(|(c, a)| row(c, String::new(), a))
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
        columns.push(Column::new("spread", "rank min/med/max (ms)", Unit::Text).screen_only());
        columns.push(Column::new("label", "kernel [category]", Unit::Text).screen_only());
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
