//! Finding the kernel a `-k` names, and the metric a misspelt `-m`/`-b` name
//! meant (docs/compatibility.md#analyze-closest-kernel).
//!
//! The exact full name keeps its meaning: it is tried first, by the modes,
//! exactly as before, so no exact `-k` ever reaches this module. Only a name
//! that is not in the file is then read as a unique substring, or as a
//! regular expression when written `/RE/`. Kernel names with their shape are
//! often longer than 130 characters, which is why a part of one is enough.

use regex::Regex;

/// What a `-k` that is not a kernel's exact name stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelMatch<'n> {
    /// Exactly one kernel matches: it is the one meant.
    Unique(&'n str),
    /// Several kernels match; all of them, in file order.
    Ambiguous(Vec<&'n str>),
    /// No kernel matches.
    NoMatch,
}

/// How many candidates an ambiguity error lists before "and N more".
const LISTED_CANDIDATES: usize = 8;

/// Resolves `wanted` among `names` (distinct, in file order): `/RE/` is a
/// regular expression searched in each name; anything else is a substring,
/// compared case-sensitively first, then ignoring ASCII case when that
/// finds nothing. An exact name is always unique, even when it is also a
/// part of other names.
pub fn resolve_kernel<'n>(wanted: &str, names: &'n [String]) -> anyhow::Result<KernelMatch<'n>> {
    if let Some(exact) = names.iter().find(|n| n.as_str() == wanted) {
        return Ok(KernelMatch::Unique(exact));
    }
    let matching: Vec<&str> = match regex_of(wanted)? {
        Some(re) => names
            .iter()
            .filter(|n| re.is_match(n))
            .map(String::as_str)
            .collect(),
        None if wanted.is_empty() => Vec::new(),
        None => {
            let exact_case: Vec<&str> = names
                .iter()
                .filter(|n| n.contains(wanted))
                .map(String::as_str)
                .collect();
            if exact_case.is_empty() {
                let lower = wanted.to_ascii_lowercase();
                names
                    .iter()
                    .filter(|n| n.to_ascii_lowercase().contains(&lower))
                    .map(String::as_str)
                    .collect()
            } else {
                exact_case
            }
        }
    };
    Ok(match matching.len() {
        0 => KernelMatch::NoMatch,
        1 => KernelMatch::Unique(matching[0]),
        _ => KernelMatch::Ambiguous(matching),
    })
}

/// The regular expression of a `/RE/` kernel argument; `None` for a plain
/// name. An invalid expression is an error naming it.
fn regex_of(wanted: &str) -> anyhow::Result<Option<Regex>> {
    let Some(body) = wanted
        .strip_prefix('/')
        .and_then(|rest| rest.strip_suffix('/'))
    else {
        return Ok(None);
    };
    Regex::new(body)
        .map(Some)
        .map_err(|e| anyhow::anyhow!("-k {wanted}: not a valid regular expression: {e}"))
}

/// The one-line message of an ambiguous `-k`: how many kernels match and
/// (the first few of) their full names.
pub fn ambiguous_message(wanted: &str, candidates: &[&str]) -> String {
    let listed: Vec<String> = candidates
        .iter()
        .take(LISTED_CANDIDATES)
        .map(|k| format!("\"{k}\""))
        .collect();
    let more = candidates.len().saturating_sub(LISTED_CANDIDATES);
    let tail = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "-k {wanted} matches {} kernels; give more of the name or a /regex/: {}{tail}",
        candidates.len(),
        listed.join(", ")
    )
}

/// Up to `max` names closest to `wanted`, best first: names that start
/// with it (the usual mistake is leaving out the `[SIMD…]` shape), then
/// names that contain it, then those that contain it ignoring case, then
/// the rest by edit distance; ties in file order.
pub fn closest_names<'n>(wanted: &str, names: &'n [String], max: usize) -> Vec<&'n str> {
    let mut scored: Vec<(usize, usize, &str)> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (closeness(wanted, n), i, n.as_str()))
        .collect();
    scored.sort();
    scored.into_iter().take(max).map(|(_, _, n)| n).collect()
}

/// Lower is closer (see [`closest_names`]).
fn closeness(wanted: &str, name: &str) -> usize {
    if wanted.is_empty() {
        return 3 + name.chars().count();
    }
    if name.starts_with(wanted) {
        0
    } else if name.contains(wanted) {
        1
    } else if name
        .to_ascii_lowercase()
        .contains(&wanted.to_ascii_lowercase())
    {
        2
    } else {
        3 + strsim::levenshtein(wanted, name)
    }
}

/// The header columns a misspelt metric name probably meant, best first
/// (at most 3): the same name with its unit (`XVE_ACTIVE` for
/// `XVE_ACTIVE[%]`) or in another case, then names containing it, then
/// names a few edits away. Unrelated names are not suggested.
pub fn suggest_metrics<'n>(wanted: &str, columns: &'n [String]) -> Vec<&'n str> {
    let wanted = wanted.trim();
    if wanted.is_empty() {
        return Vec::new();
    }
    let lower = wanted.to_ascii_lowercase();
    let bare = |name: &str| {
        name.split_once('[')
            .map_or(name, |(b, _)| b)
            .trim()
            .to_ascii_lowercase()
    };
    let wanted_bare = bare(wanted);
    let budget = (wanted.chars().count() / 4).max(2);
    let mut scored: Vec<(usize, usize, &str)> = columns
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let name = c.as_str();
            let score = if bare(name) == wanted_bare || name.to_ascii_lowercase() == lower {
                0
            } else if name.to_ascii_lowercase().contains(&lower) {
                1
            } else {
                let d = strsim::levenshtein(&lower, &name.to_ascii_lowercase());
                if d > budget {
                    return None;
                }
                2 + d
            };
            Some((score, i, name))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, _, n)| n).collect()
}

/// `; did you mean "A" or "B"?`, or nothing without suggestions.
pub fn did_you_mean(suggestions: &[&str]) -> String {
    if suggestions.is_empty() {
        return String::new();
    }
    let quoted: Vec<String> = suggestions.iter().map(|s| format!("\"{s}\"")).collect();
    format!("; did you mean {}?", quoted.join(" or "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn exact_then_substring_then_regex() {
        let k = names(&[
            "softmax_fwd[SIMD16 {1; 1; 1} {16; 1; 1}]",
            "softmax_bwd[SIMD16 {1; 1; 1} {16; 1; 1}]",
            "gemm",
            "gemm_tail",
        ]);
        assert_eq!(
            resolve_kernel("gemm", &k).unwrap(),
            KernelMatch::Unique("gemm")
        );
        assert_eq!(
            resolve_kernel("fwd", &k).unwrap(),
            KernelMatch::Unique(k[0].as_str())
        );
        assert_eq!(
            resolve_kernel("SOFTMAX_B", &k).unwrap(),
            KernelMatch::Unique(k[1].as_str())
        );
        assert_eq!(
            resolve_kernel("softmax", &k).unwrap(),
            KernelMatch::Ambiguous(vec![k[0].as_str(), k[1].as_str()])
        );
        assert_eq!(
            resolve_kernel("/^gemm_/", &k).unwrap(),
            KernelMatch::Unique("gemm_tail")
        );
        assert_eq!(resolve_kernel("conv", &k).unwrap(), KernelMatch::NoMatch);
        assert!(resolve_kernel("/(/", &k).is_err());
    }

    #[test]
    fn ambiguity_lists_a_bounded_number_of_candidates() {
        let many: Vec<String> = (0..12).map(|i| format!("k{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let message = ambiguous_message("k", &refs);
        assert!(message.starts_with("-k k matches 12 kernels;"), "{message}");
        assert!(message.ends_with("\"k7\" and 4 more"), "{message}");
    }

    #[test]
    fn suggestions_rank_substrings_first() {
        let k = names(&["attention_softmax_kernel", "gemm_kernel", "softmix"]);
        assert_eq!(
            closest_names("softmax", &k, 2),
            vec!["attention_softmax_kernel", "softmix"]
        );
    }

    #[test]
    fn metric_suggestions_add_the_unit() {
        let columns = names(&["Kernel", "GpuTime[ns]", "XVE_ACTIVE[%]", "XVE_STALL[%]"]);
        assert_eq!(
            suggest_metrics("XVE_ACTIVE", &columns),
            vec!["XVE_ACTIVE[%]"]
        );
        assert_eq!(
            suggest_metrics("gputime[ns]", &columns),
            vec!["GpuTime[ns]"]
        );
        assert!(suggest_metrics("NOPE[x]", &columns).is_empty());
        assert_eq!(
            did_you_mean(&["XVE_ACTIVE[%]"]),
            "; did you mean \"XVE_ACTIVE[%]\"?"
        );
    }
}
