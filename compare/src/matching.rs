//! Matching items of two runs (docs/compare.md#matching): exact name first,
//! then, for what is left, the name without its launch shape, then with
//! template arguments normalised, so a renamed or reshaped kernel is paired
//! with its old self instead of looking like one kernel vanishing and
//! another appearing.

use std::collections::BTreeMap;

/// How far matching goes (`--match`); each level includes the ones before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum MatchLevel {
    Exact,
    Shape,
    Template,
}

impl MatchLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchLevel::Exact => "exact",
            MatchLevel::Shape => "shape",
            MatchLevel::Template => "template",
        }
    }
}

/// The name without its launch shape: one rule for every tool that
/// matches kernels across runs (docs/compare.md#matching).
pub use unitrace_core::timeline::names::strip_shape;

/// The name without its shape and with every template argument list
/// replaced by `<>`: `gemm<float, 128>` and `gemm<half, 64>` are one kernel.
pub fn normalise_templates(name: &str) -> String {
    let s = strip_shape(name);
    let mut out = String::with_capacity(s.len());
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '<' => {
                if depth == 0 {
                    out.push('<');
                }
                depth += 1;
            }
            '>' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push('>');
                }
            }
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    if depth > 0 {
        // Unbalanced (`operator<`): leave the name as it is.
        return s.to_string();
    }
    out
}

/// How a pair was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchedBy {
    Exact,
    Shape,
    Template,
}

impl MatchedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchedBy::Exact => "exact",
            MatchedBy::Shape => "shape",
            MatchedBy::Template => "template",
        }
    }
}

/// The outcome: pairs of indices, and the items only one side has.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Matching {
    pub pairs: Vec<(usize, usize, Option<MatchedBy>)>,
    /// Candidate items without a baseline item.
    pub new: Vec<usize>,
    /// Baseline items without a candidate item.
    pub vanished: Vec<usize>,
}

/// Pairs `base` and `cand` names; `times` order the leftovers so that, when
/// several items share a key, the biggest are paired first (deterministic).
pub fn match_items(
    base: &[(&str, f64)],
    cand: &[(&str, f64)],
    level: MatchLevel,
    kernel_names: bool,
) -> Matching {
    let mut base_free: Vec<bool> = vec![true; base.len()];
    let mut cand_free: Vec<bool> = vec![true; cand.len()];
    let mut pairs = Vec::new();
    let levels: &[MatchedBy] = match (level, kernel_names) {
        (_, false) | (MatchLevel::Exact, _) => &[MatchedBy::Exact],
        (MatchLevel::Shape, true) => &[MatchedBy::Exact, MatchedBy::Shape],
        (MatchLevel::Template, true) => &[MatchedBy::Exact, MatchedBy::Shape, MatchedBy::Template],
    };
    for &by in levels {
        let key = |n: &str| -> String {
            match by {
                MatchedBy::Exact => n.to_string(),
                MatchedBy::Shape => strip_shape(n).to_string(),
                MatchedBy::Template => normalise_templates(n),
            }
        };
        // key -> free baseline indices, biggest time first.
        let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        let mut order: Vec<usize> = (0..base.len()).filter(|&i| base_free[i]).collect();
        order.sort_by(|&a, &b| {
            base[b]
                .1
                .total_cmp(&base[a].1)
                .then(base[a].0.cmp(base[b].0))
        });
        for i in order {
            by_key.entry(key(base[i].0)).or_default().push(i);
        }
        let mut corder: Vec<usize> = (0..cand.len()).filter(|&j| cand_free[j]).collect();
        corder.sort_by(|&a, &b| {
            cand[b]
                .1
                .total_cmp(&cand[a].1)
                .then(cand[a].0.cmp(cand[b].0))
        });
        for j in corder {
            if let Some(list) = by_key.get_mut(&key(cand[j].0)) {
                if !list.is_empty() {
                    let i = list.remove(0);
                    base_free[i] = false;
                    cand_free[j] = false;
                    pairs.push((i, j, Some(by)));
                }
            }
        }
    }
    Matching {
        pairs,
        new: (0..cand.len()).filter(|&j| cand_free[j]).collect(),
        vanished: (0..base.len()).filter(|&i| base_free[i]).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_is_stripped() {
        assert_eq!(strip_shape("gemm[SIMD32 {256; 1; 1} {64; 1; 1}]"), "gemm");
        assert_eq!(
            strip_shape("zeCommandListAppendMemoryCopy(M2D)[4096]"),
            "zeCommandListAppendMemoryCopy(M2D)"
        );
        assert_eq!(strip_shape("k {8, 1, 1} {1, 1, 1}"), "k");
        assert_eq!(strip_shape("a[i]"), "a[i]");
        assert_eq!(strip_shape("plain"), "plain");
    }

    #[test]
    fn templates_are_normalised() {
        assert_eq!(
            normalise_templates("gemm<float, 128>[SIMD16 {1; 1; 1} {1; 1; 1}]"),
            "gemm<>"
        );
        assert_eq!(normalise_templates("ns::k<a<b>, c>::run"), "ns::k<>::run");
        assert_eq!(normalise_templates("operator<"), "operator<");
    }

    #[test]
    fn levels_pair_leftovers_only() {
        let base = [
            ("gemm[SIMD32 {1; 1; 1} {1; 1; 1}]", 10.0),
            ("relu<float>", 5.0),
            ("old", 1.0),
        ];
        let cand = [
            ("gemm[SIMD16 {2; 1; 1} {1; 1; 1}]", 12.0),
            ("relu<half>", 4.0),
            ("fresh", 2.0),
        ];
        let m = match_items(&base, &cand, MatchLevel::Exact, true);
        assert!(m.pairs.is_empty());
        let m = match_items(&base, &cand, MatchLevel::Shape, true);
        assert_eq!(m.pairs, vec![(0, 0, Some(MatchedBy::Shape))]);
        let m = match_items(&base, &cand, MatchLevel::Template, true);
        assert_eq!(
            m.pairs,
            vec![
                (0, 0, Some(MatchedBy::Shape)),
                (1, 1, Some(MatchedBy::Template))
            ]
        );
        assert_eq!(m.new, vec![2]);
        assert_eq!(m.vanished, vec![2]);
        // Names that are not kernels match exactly only.
        let m = match_items(&base, &cand, MatchLevel::Template, false);
        assert!(m.pairs.is_empty());
    }
}
