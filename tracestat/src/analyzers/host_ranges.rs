//! Host ranges projected onto the device (docs/tracestat.md#host-ranges):
//! for each annotated host range (ITT task, PyTorch op, oneDNN primitive,
//! oneCCL or MPI call; Kineto `cpu_op`, `user_annotation`), the device time
//! of the operations submitted inside it (inclusive, and as the innermost
//! range), its calls and host time; with `--tree N`, the range paths down
//! to each kernel.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as FastMap;

use serde::{Deserialize, Serialize};
use unitrace_core::timeline::NameId;
use unitrace_render::sections::{Column, Figure, Section, Table, Unit, Value};

use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::labels::{self, Label};
use crate::rank_model::{union_len, RankModel};
use crate::time::{us, Ns};

/// At most this many rows of the range table on screen.
const TOP: usize = 15;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RangeAgg {
    /// A label shared by every rank (docs/tracestat.md#many-ranks).
    #[serde(deserialize_with = "labels::deserialize_one")]
    pub name: Label,
    /// Kernels launched inside the range (nested ranges of the same name
    /// counted once).
    pub launches: u64,
    pub inclusive_ns: Ns,
    /// Kernels whose innermost range is this one.
    pub self_launches: u64,
    pub self_ns: Ns,
    /// Host time in the range (union over nested instances).
    pub host_ns: Ns,
    pub calls: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeRow {
    /// Range names, outermost first, at most `tree_depth` of them.
    pub path: Vec<String>,
    pub kernel: String,
    pub launches: u64,
    pub gpu_ns: Ns,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankRanges {
    pub host_ranges: Vec<RangeAgg>,
    pub tree: Vec<TreeRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HostRangeRow {
    pub name: String,
    pub ranks: usize,
    pub calls: u64,
    pub host_us: f64,
    pub launches: u64,
    pub gpu_inclusive_us: f64,
    pub self_launches: u64,
    pub gpu_self_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TreeOut {
    pub path: Vec<String>,
    pub kernel: String,
    pub launches: u64,
    pub gpu_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct HostRangesOut {
    pub host_ranges: Vec<HostRangeRow>,
    pub host_tree: Vec<TreeOut>,
}

pub struct HostRanges;

impl Analyzer for HostRanges {
    type Rank = RankRanges;
    type Output = HostRangesOut;

    fn observe(m: &RankModel<'_>, o: &RankOptions) -> Self::Rank {
        // Keyed by what the model holds (borrowed, hashed with Fx): no
        // allocation per kernel or host call.
        let mut ranges: FastMap<NameId, RangeAgg> = FastMap::default();
        let mut tree: FastMap<(&[NameId], &str), (u64, Ns)> = FastMap::default();
        let mut seen: Vec<NameId> = Vec::new();
        for (k, path) in m.trace.kernels.iter().zip(m.enclosing.iter()) {
            let Some(path) = path else { continue };
            let d = k.end - k.start;
            seen.clear();
            for &r in path {
                if seen.contains(&r) {
                    continue;
                }
                seen.push(r);
                let a = ranges.entry(r).or_default();
                a.launches += 1;
                a.inclusive_ns += d;
            }
            if let Some(&inner) = path.last() {
                let a = ranges.entry(inner).or_default();
                a.self_launches += 1;
                a.self_ns += d;
            }
            if o.tree_depth > 0 {
                let p = &path[..path.len().min(o.tree_depth)];
                let e = tree
                    .entry((p, m.kinds[k.name.index()].short_name.as_str()))
                    .or_default();
                e.0 += 1;
                e.1 += d;
            }
        }
        let mut host_time: FastMap<NameId, (u64, Vec<(Ns, Ns)>)> = FastMap::default();
        for h in &m.trace.host {
            let e = host_time.entry(h.name).or_default();
            e.0 += 1;
            e.1.push((h.start, h.end));
        }
        for (name, (calls, spans)) in host_time {
            let a = ranges.entry(name).or_default();
            a.calls = calls;
            a.host_ns = union_len(spans);
        }
        let mut host_ranges: Vec<RangeAgg> = ranges
            .into_iter()
            .map(|(id, mut a)| {
                a.name = labels::label(m.name(id));
                a
            })
            .collect();
        host_ranges.sort_by(|a, b| a.name.cmp(&b.name));
        let mut tree: Vec<TreeRow> = tree
            .into_iter()
            .map(|((p, kernel), (launches, gpu_ns))| TreeRow {
                path: p.iter().map(|&r| m.name(r).to_string()).collect(),
                kernel: kernel.to_string(),
                launches,
                gpu_ns,
            })
            .collect();
        tree.sort_by(|a, b| (&a.path, &a.kernel).cmp(&(&b.path, &b.kernel)));
        RankRanges { host_ranges, tree }
    }

    fn part(rank: &RankSummary) -> &Self::Rank {
        &rank.parts.host_ranges
    }

    fn finish(ranks: &Ranks<'_>, _: &Finished) -> HostRangesOut {
        let mut hr: BTreeMap<&str, HostRangeRow> = BTreeMap::new();
        let mut tree: BTreeMap<(Vec<String>, String), (u64, Ns)> = BTreeMap::new();
        for r in ranks.ranks {
            let part = Self::part(r);
            for a in &part.host_ranges {
                let e = hr.entry(&a.name).or_insert_with(|| HostRangeRow {
                    name: a.name.to_string(),
                    ranks: 0,
                    calls: 0,
                    host_us: 0.0,
                    launches: 0,
                    gpu_inclusive_us: 0.0,
                    self_launches: 0,
                    gpu_self_us: 0.0,
                });
                e.ranks += 1;
                e.calls += a.calls;
                e.host_us += us(a.host_ns);
                e.launches += a.launches;
                e.gpu_inclusive_us += us(a.inclusive_ns);
                e.self_launches += a.self_launches;
                e.gpu_self_us += us(a.self_ns);
            }
            for t in &part.tree {
                let e = tree.entry((t.path.clone(), t.kernel.clone())).or_default();
                e.0 += t.launches;
                e.1 += t.gpu_ns;
            }
        }
        let mut host_ranges: Vec<HostRangeRow> = hr.into_values().collect();
        host_ranges.sort_by(|a, b| {
            b.gpu_inclusive_us
                .total_cmp(&a.gpu_inclusive_us)
                .then_with(|| a.name.cmp(&b.name))
        });
        let host_tree = tree
            .into_iter()
            .map(|((path, kernel), (launches, gpu))| TreeOut {
                path,
                kernel,
                launches,
                gpu_us: us(gpu),
            })
            .collect();
        HostRangesOut {
            host_ranges,
            host_tree,
        }
    }

    fn sections(r: &Report, _: &Screen) -> Vec<Section> {
        let out = &r.out.host_ranges;
        let mut s = Section::new(
            "host-ranges",
            "Host ranges and the GPU time of the kernels they launched (all ranks)",
        );
        let mut t = Table::new(
            "host_ranges",
            "",
            vec![
                Column::new("range", "range", Unit::Text).files_only(),
                Column::new("ranks", "ranks", Unit::Count).files_only(),
                Column::new("calls", "calls", Unit::Count).files_only(),
                Column::new("host_us", "host", Unit::Us),
                Column::new("launches", "launches", Unit::Count),
                Column::new("gpu_inclusive_us", "gpu incl", Unit::Us),
                Column::new("self_launches", "self launches", Unit::Count).files_only(),
                Column::new("gpu_self_us", "gpu self", Unit::Us),
                Column::new("name", "range", Unit::Text)
                    .screen_only()
                    .long_names(),
            ],
        );
        for x in &out.host_ranges {
            t.push(vec![
                Value::from(&x.name),
                x.ranks.into(),
                x.calls.into(),
                x.host_us.into(),
                x.launches.into(),
                x.gpu_inclusive_us.into(),
                x.self_launches.into(),
                x.gpu_self_us.into(),
                Value::from(&x.name),
            ]);
        }
        if t.rows.len() > TOP {
            t.show_only(
                (0..TOP).collect(),
                format!("({} of {} ranges; all in --csv/--json)", TOP, t.rows.len()),
            );
        }
        s.tables.push(t);
        if !out.host_tree.is_empty() {
            let mut s2 = Section::new(
                "host-tree",
                format!("Op -> kernel tree (depth {})", r.options.tree_depth),
            );
            s2.figures.push(Figure {
                svg: None,
                text: Some(tree_text(&out.host_tree)),
                caption: String::new(),
            });
            let mut t = Table::new(
                "host_tree",
                "",
                vec![
                    Column::new("path", "path", Unit::Text).long_names(),
                    Column::new("kernel", "kernel", Unit::Text).long_names(),
                    Column::new("launches", "launches", Unit::Count),
                    Column::new("gpu_us", "gpu", Unit::Us),
                ],
            );
            for x in &out.host_tree {
                t.push(vec![
                    x.path.join(" > ").into(),
                    Value::from(&x.kernel),
                    x.launches.into(),
                    x.gpu_us.into(),
                ]);
            }
            t.files_only = true;
            s2.tables.push(t);
            return vec![s, s2];
        }
        vec![s]
    }
}

/// The tree as indented text: each range on its own line, the kernels
/// under the innermost with their device time and launches.
fn tree_text(tree: &[TreeOut]) -> String {
    let mut out = String::new();
    let mut prev: Vec<String> = Vec::new();
    for (i, t) in tree.iter().enumerate() {
        if i == 0 && t.path.is_empty() {
            out.push_str("(launched outside any host range)\n");
        }
        let common = prev.iter().zip(&t.path).take_while(|(a, b)| a == b).count();
        for (d, p) in t.path.iter().enumerate().skip(common) {
            out.push_str(&format!("{}{}\n", "  ".repeat(d), p));
        }
        out.push_str(&format!(
            "{}{:.3} ms  {} x  {}\n",
            "  ".repeat(t.path.len().max(1)),
            t.gpu_us / 1e3,
            t.launches,
            t.kernel
        ));
        prev = t.path.clone();
    }
    out
}
