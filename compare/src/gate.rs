//! The CI gate (`--fail-if`, docs/compare.md#ci-gate):
//! `SELECTOR[@METRIC](>|<)THRESHOLD`, e.g. `total>+2%`,
//! `kernel:gemm*>+5%`, `category:allreduce>+10%`,
//! `kernel:*@EuActive[%]<-5pt`, `rank:*@wall_us>+3ms`. A threshold always
//! has a unit or `%`; except the findings' counts
//! (docs/compare.md#findings): `findings:new>0`, `findings:resolved<1`,
//! `findings:total>3`, `findings:new:pageable-*>0`.

use anyhow::{anyhow, bail, Result};

use crate::delta::Comparison;

#[derive(Debug, Clone, PartialEq)]
pub enum Selector {
    Total,
    /// `findings:WHICH[:RULE-GLOB]`: how many findings are new, resolved,
    /// or in the candidate (`total`), of the rules the glob matches.
    Findings {
        which: String,
        glob: String,
    },
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
    /// Change in the metric's unit (microseconds for time, nanoseconds for
    /// a `[ns]` column).
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

/// What unit a gated value is in, which decides the threshold's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricUnit {
    /// Microseconds: the time, and metrics named `*_us`.
    Time,
    /// Nanoseconds: metric CSV columns named `*[ns]*` (`GpuTime[ns].mean`).
    Nanoseconds,
    /// Anything else (counts, percentages, GFLOPS): `pt` is its own unit.
    Plain,
}

impl MetricUnit {
    pub fn of(metric: Option<&str>) -> MetricUnit {
        match metric {
            None => MetricUnit::Time,
            Some(m) if m.ends_with("_us") => MetricUnit::Time,
            Some(m) if m.contains("[ns]") => MetricUnit::Nanoseconds,
            Some(_) => MetricUnit::Plain,
        }
    }
}

/// Why a threshold does not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdError {
    /// Not a number with a known suffix.
    Malformed,
    /// A number without a unit: `2` could be 2 us or 2%.
    Bare,
    /// A time unit on a metric that is not a time, or `pt` on a time.
    WrongUnit,
}

/// The accepted forms, for messages.
pub const THRESHOLD_FORMS: &str = "a percentage (+5%), a time (+250us, 2ms, 1s, 500ns) or, for a metric that is not a time, points of its own unit (+5pt)";

/// Parses a threshold: `+2%`, `-5%`, `3ms`, `+250us` (a time), `+5pt` (a
/// metric's own unit); a bare number is refused: `2` could be 2 us or 2%
/// (docs/compare.md#ci-gate).
pub fn parse_threshold(s: &str, unit: MetricUnit) -> Result<Threshold, ThresholdError> {
    let s = s.trim();
    let number = |p: &str| {
        p.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or(ThresholdError::Malformed)
    };
    if let Some(p) = s.strip_suffix('%') {
        return number(p).map(Threshold::Relative);
    }
    if let Some(p) = s.strip_suffix("pt") {
        let v = number(p)?;
        return match unit {
            MetricUnit::Plain => Ok(Threshold::Absolute(v)),
            _ => Err(ThresholdError::WrongUnit),
        };
    }
    let units = [("ns", 1e-3), ("us", 1.0), ("ms", 1e3), ("s", 1e6)];
    for (u, scale) in units {
        if let Some(p) = s.strip_suffix(u) {
            let v = number(p)?;
            return match unit {
                MetricUnit::Time => Ok(Threshold::Absolute(v * scale)),
                MetricUnit::Nanoseconds => Ok(Threshold::Absolute(v * scale * 1e3)),
                MetricUnit::Plain => Err(ThresholdError::WrongUnit),
            };
        }
    }
    number(s)?;
    Err(ThresholdError::Bare)
}

/// `findings:WHICH[:GLOB](>|<)N`: a count, so N is a bare number.
fn parse_findings_rule(text: &str) -> Result<Rule> {
    let err = || {
        anyhow!("--fail-if '{text}': expected findings:new>N, findings:resolved<N or findings:total>N (optionally findings:new:RULE-GLOB>N), N a count")
    };
    let pos = text.rfind(['>', '<']).ok_or_else(err)?;
    let above = text[pos..].starts_with('>');
    let n: f64 = text[pos + 1..]
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(err)?;
    let sel = text[..pos].trim();
    let rest = sel.strip_prefix("findings:").ok_or_else(err)?;
    let (which, glob) = rest.split_once(':').unwrap_or((rest, "*"));
    if !["new", "resolved", "total"].contains(&which) || glob.is_empty() {
        return Err(err());
    }
    Ok(Rule {
        text: text.to_string(),
        selector: Selector::Findings {
            which: which.to_string(),
            glob: glob.to_string(),
        },
        metric: None,
        above,
        threshold: Threshold::Absolute(n),
    })
}

pub fn parse_rule(text: &str) -> Result<Rule> {
    if text.trim_start().starts_with("findings:") {
        return parse_findings_rule(text.trim());
    }
    let err = || {
        anyhow!("--fail-if '{text}': expected SELECTOR[@METRIC]>THRESHOLD, e.g. 'total>+2%', 'kernel:gemm*>+5%', 'kernel:gemm*>+100us', 'kernel:k@EuActive[%]<-5pt'")
    };
    // The operator is the last '>' or '<' whose right side reads as a
    // threshold of some unit, or a bare number (refused below with its own
    // message); kernel names hold '<' '>' of templates.
    let (pos, above, rest) = text
        .char_indices()
        .rev()
        .filter(|&(_, c)| c == '>' || c == '<')
        .map(|(i, c)| (i, c == '>', &text[i + 1..]))
        .find(|(_, _, rest)| {
            [MetricUnit::Time, MetricUnit::Plain]
                .iter()
                .any(|&u| parse_threshold(rest, u) != Err(ThresholdError::Malformed))
        })
        .ok_or_else(err)?;
    let left = text[..pos].trim();
    let (sel, metric) = match left.rsplit_once('@') {
        Some((s, m)) if !m.is_empty() => (s.trim(), Some(m.trim().to_string())),
        _ => (left, None),
    };
    let metric = metric.filter(|m| m != "time" && m != "time_us");
    let unit = MetricUnit::of(metric.as_deref());
    let threshold = parse_threshold(rest, unit).map_err(|e| match e {
        ThresholdError::Bare => anyhow!(
            "--fail-if '{text}': the threshold '{}' has no unit; give {THRESHOLD_FORMS}",
            rest.trim()
        ),
        ThresholdError::WrongUnit if unit == MetricUnit::Plain => anyhow!(
            "--fail-if '{text}': '{}' is not a time; give a percentage (+5%) or points of its own unit (+5pt)",
            metric.as_deref().unwrap_or("time")
        ),
        ThresholdError::WrongUnit => anyhow!(
            "--fail-if '{text}': a time takes a percentage (+5%) or a time unit (+250us, 2ms, 1s, 500ns), not pt"
        ),
        ThresholdError::Malformed => err(),
    })?;
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
        crate::spell::fmt_us(v)
    } else {
        crate::spell::fmt_num(v)
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

/// A findings rule: the count of the findings it selects against N.
fn check_findings(rule: &Rule, which: &str, glob: &str, cmp: &Comparison, out: &mut Verdict) {
    let Some(f) = &cmp.findings else {
        out.warnings.push(format!(
            "--fail-if '{}': these inputs have no findings (only traces do: docs/findings.md)",
            rule.text
        ));
        return;
    };
    let rows: Vec<&crate::delta::FindingRow> = match which {
        "new" => f.new.iter().collect(),
        "resolved" => f.resolved.iter().collect(),
        _ => f.new.iter().chain(&f.kept).collect(),
    };
    let hits: Vec<String> = rows
        .iter()
        .filter(|r| glob_match(glob, &r.rule))
        .map(|r| {
            let name = if r.name.is_empty() {
                String::new()
            } else {
                format!(" {}", r.name)
            };
            format!("{} rank {}{name}", r.rule, r.rank)
        })
        .collect();
    let n = hits.len() as f64;
    let limit = match rule.threshold {
        Threshold::Relative(v) | Threshold::Absolute(v) => v,
    };
    let fails = if rule.above { n > limit } else { n < limit };
    if fails {
        out.violations.push(format!(
            "findings: {} {which}{} breaks '{}'",
            hits.len(),
            if hits.is_empty() {
                String::new()
            } else {
                format!(" ({})", hits.join(", "))
            },
            rule.text
        ));
    }
}

pub fn evaluate(rules: &[Rule], cmp: &Comparison) -> Verdict {
    let mut out = Verdict::default();
    for rule in rules {
        match &rule.selector {
            Selector::Findings { which, glob } => check_findings(rule, which, glob, cmp, &mut out),
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
                        MetricUnit::of(rule.metric.as_deref()) == MetricUnit::Time,
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
        let r = parse_rule("kernel:k@EuActive[%]<-5pt").unwrap();
        assert_eq!(r.metric.as_deref(), Some("EuActive[%]"));
        assert_eq!(r.threshold, Threshold::Absolute(-5.0));
        assert!(!r.above);
        let r = parse_rule("rank:*>3ms").unwrap();
        assert_eq!(r.threshold, Threshold::Absolute(3000.0));
        // Metrics in us and ns take time units in their own unit.
        let r = parse_rule("rank:*@wall_us>1ms").unwrap();
        assert_eq!(r.threshold, Threshold::Absolute(1000.0));
        let r = parse_rule("kernel:*@GpuTime[ns].mean>2us").unwrap();
        assert_eq!(r.threshold, Threshold::Absolute(2000.0));
        assert!(parse_rule("total").is_err());
        assert!(parse_rule("gemm>5%").is_err());
        assert!(parse_rule("total@x>1%").is_err());
        let r = parse_rule("findings:new>0").unwrap();
        assert_eq!(
            r.selector,
            Selector::Findings {
                which: "new".into(),
                glob: "*".into()
            }
        );
        assert_eq!(r.threshold, Threshold::Absolute(0.0));
        let r = parse_rule("findings:resolved:pageable-*<1").unwrap();
        assert!(!r.above);
        assert_eq!(
            r.selector,
            Selector::Findings {
                which: "resolved".into(),
                glob: "pageable-*".into()
            }
        );
        assert!(parse_rule("findings:old>0").is_err());
        assert!(parse_rule("findings:new>x").is_err());
    }

    #[test]
    fn a_threshold_needs_a_unit() {
        let msg = |r: &str| format!("{:#}", parse_rule(r).unwrap_err());
        let m = msg("total>2");
        assert!(m.contains("the threshold '2' has no unit"), "{m}");
        assert!(
            m.contains("+5%") && m.contains("2ms") && m.contains("+5pt"),
            "{m}"
        );
        assert!(msg("kernel:k@EuActive[%]<-5").contains("has no unit"));
        assert!(msg("kernel:k@EuActive[%]>3ms").contains("is not a time"));
        assert!(msg("kernel:gemm>3pt").contains("not pt"));
        assert_eq!(
            parse_threshold("2", MetricUnit::Time),
            Err(ThresholdError::Bare)
        );
        assert_eq!(
            parse_threshold("2 ms", MetricUnit::Time),
            Ok(Threshold::Absolute(2000.0))
        );
        assert_eq!(
            parse_threshold("x%", MetricUnit::Time),
            Err(ThresholdError::Malformed)
        );
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
