//! The CI gate (`--fail-if`, docs/compare.md#ci-gate):
//! `SELECTOR[@METRIC](>|<)THRESHOLD`, e.g. `total>+2%`,
//! `kernel:gemm*>+5%`, `category:allreduce>+10%`,
//! `kernel:*@EuActive[%]<-5`, `rank:*@wall_us>+3ms`.

use anyhow::{anyhow, bail, Result};

use crate::delta::Comparison;

#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    Total,
    /// `SECTION:GLOB`.
    Items {
        section: String,
        glob: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// Percent change.
    Relative(f64),
    /// Change in the metric's unit (microseconds for time).
    Absolute(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    pub text: String,
    pub selector: Selector,
    /// `None`: time.
    pub metric: Option<String>,
    /// `true` for `>` (fail when the change is above), `false` for `<`.
    pub above: bool,
    pub threshold: Threshold,
}

/// Parses a threshold: `+2%`, `-5%`, `3ms`, `+250us`, `0.5` (metric unit).
fn parse_threshold(s: &str, time: bool) -> Option<Threshold> {
    let s = s.trim();
    if let Some(p) = s.strip_suffix('%') {
        return p
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(Threshold::Relative);
    }
    let units = [("ns", 1e-3), ("us", 1.0), ("ms", 1e3), ("s", 1e6)];
    for (u, scale) in units {
        if let Some(p) = s.strip_suffix(u) {
            if !time {
                return None;
            }
            return p
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .map(|v| Threshold::Absolute(v * scale));
        }
    }
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(Threshold::Absolute)
}

pub fn parse_rule(text: &str) -> Result<Rule> {
    let err = || {
        anyhow!("--fail-if '{text}': expected SELECTOR[@METRIC]>THRESHOLD, e.g. 'total>+2%', 'kernel:gemm*>+5%', 'category:allreduce>+10%', 'kernel:k@EuActive[%]<-5'")
    };
    // The operator is the last '>' or '<' whose right side is a threshold
    // (kernel names hold '<' '>' of templates).
    let (pos, above, rest) = text
        .char_indices()
        .rev()
        .filter(|&(_, c)| c == '>' || c == '<')
        .map(|(i, c)| (i, c == '>', &text[i + 1..]))
        .find(|(_, _, rest)| parse_threshold(rest, true).is_some())
        .ok_or_else(err)?;
    let left = text[..pos].trim();
    let (sel, metric) = match left.rsplit_once('@') {
        Some((s, m)) if !m.is_empty() => (s.trim(), Some(m.trim().to_string())),
        _ => (left, None),
    };
    let metric = metric.filter(|m| m != "time" && m != "time_us");
    let threshold = parse_threshold(rest, metric.is_none()).ok_or_else(err)?;
    let selector = if sel == "total" {
        if metric.is_some() {
            bail!("--fail-if '{text}': 'total' has only a time");
        }
        Selector::Total
    } else {
        let (section, glob) = sel.split_once(':').ok_or_else(err)?;
        if glob.is_empty() {
            return Err(err());
        }
        Selector::Items {
            section: section.trim().to_string(),
            glob: glob.to_string(),
        }
    };
    Ok(Rule {
        text: text.to_string(),
        selector,
        metric,
        above,
        threshold,
    })
}

/// `*` any run of characters, `?` one character; everything else literal.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Result of a gate: violations (one line each) and warnings.
#[derive(Debug, Default)]
pub struct Verdict {
    pub violations: Vec<String>,
    pub warnings: Vec<String>,
}

fn fmt_value(v: f64, time: bool) -> String {
    if time {
        crate::output::fmt_us(v)
    } else {
        crate::output::fmt_num(v)
    }
}

fn check(rule: &Rule, what: &str, base: f64, cand: f64, time: bool, out: &mut Verdict) {
    let delta = cand - base;
    let (value, shown) = match rule.threshold {
        Threshold::Relative(_) => {
            let pct = if base != 0.0 {
                delta / base * 100.0
            } else if delta > 0.0 {
                f64::INFINITY
            } else if delta < 0.0 {
                f64::NEG_INFINITY
            } else {
                0.0
            };
            (pct, format!("{pct:+.2}%"))
        }
        Threshold::Absolute(_) => (
            delta,
            format!(
                "{}{}",
                if delta >= 0.0 { "+" } else { "" },
                fmt_value(delta, time)
            ),
        ),
    };
    let limit = match rule.threshold {
        Threshold::Relative(v) | Threshold::Absolute(v) => v,
    };
    let fails = if rule.above {
        value > limit
    } else {
        value < limit
    };
    if fails {
        out.violations.push(format!(
            "{what}: {} -> {} ({shown}) breaks '{}'",
            fmt_value(base, time),
            fmt_value(cand, time),
            rule.text
        ));
    }
}

pub fn evaluate(rules: &[Rule], cmp: &Comparison) -> Verdict {
    let mut out = Verdict::default();
    for rule in rules {
        match &rule.selector {
            Selector::Total => check(
                rule,
                &format!("total ({})", cmp.total_what),
                cmp.baseline_total_us,
                cmp.candidate_total_us,
                true,
                &mut out,
            ),
            Selector::Items { section, glob } => {
                let Some(sec) = cmp.sections.iter().find(|s| s.section == section) else {
                    let known: Vec<&str> = cmp.sections.iter().map(|s| s.section).collect();
                    out.warnings.push(format!(
                        "--fail-if '{}': these inputs have no '{section}' items (they have {})",
                        rule.text,
                        known.join(", ")
                    ));
                    continue;
                };
                let metric = rule.metric.as_deref().unwrap_or("time");
                let mut hits = 0;
                for row in &sec.rows {
                    let matches = glob_match(glob, &row.name)
                        || row
                            .baseline_name
                            .as_deref()
                            .is_some_and(|b| glob_match(glob, b));
                    if !matches {
                        continue;
                    }
                    hits += 1;
                    let (b, c) = if rule.metric.is_none() {
                        (row.baseline_us, row.candidate_us)
                    } else if let Some(v) = row.metric(metric) {
                        v
                    } else {
                        continue;
                    };
                    check(
                        rule,
                        &format!(
                            "{section} {} [{}]{}",
                            row.name,
                            row.status,
                            rule.metric
                                .as_deref()
                                .map(|m| format!(" {m}"))
                                .unwrap_or_default()
                        ),
                        b,
                        c,
                        rule.metric.is_none(),
                        &mut out,
                    );
                }
                if hits == 0 {
                    out.warnings.push(format!(
                        "--fail-if '{}': no {section} item matches '{glob}'",
                        rule.text
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse() {
        let r = parse_rule("total>+2%").unwrap();
        assert_eq!(r.selector, Selector::Total);
        assert_eq!(r.threshold, Threshold::Relative(2.0));
        assert!(r.above);
        let r = parse_rule("kernel:gemm<float, 4>*>+5%").unwrap();
        assert_eq!(
            r.selector,
            Selector::Items {
                section: "kernel".into(),
                glob: "gemm<float, 4>*".into()
            }
        );
        let r = parse_rule("kernel:k@EuActive[%]<-5").unwrap();
        assert_eq!(r.metric.as_deref(), Some("EuActive[%]"));
        assert_eq!(r.threshold, Threshold::Absolute(-5.0));
        assert!(!r.above);
        let r = parse_rule("rank:*>3ms").unwrap();
        assert_eq!(r.threshold, Threshold::Absolute(3000.0));
        assert!(parse_rule("total").is_err());
        assert!(parse_rule("gemm>5%").is_err());
        assert!(parse_rule("kernel:k@EuActive[%]>3ms").is_err());
        assert!(parse_rule("total@x>1%").is_err());
    }

    #[test]
    fn globs() {
        assert!(glob_match("gemm*", "gemm_kernel[SIMD32]"));
        assert!(glob_match("*reduce*", "allreduce"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("gemm*", "xgemm"));
        assert!(glob_match("*", ""));
    }
}
