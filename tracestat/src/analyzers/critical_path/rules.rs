//! `--what-if RULE` (docs/tracestat.md#what-if): which durations a rule
//! changes and how.
//!
//! * `kernel:GLOB=-20%` / `=+10%` / `=5us` / `=-3us`: kernels whose name
//!   without its launch shape (compare's `--match shape`) matches GLOB take
//!   that share of their time, that time, or that much less;
//! * `range:GLOB=-30%`: host time inside ranges matching GLOB;
//! * `rank:N=median`: rank N's kernels as fast as the median rank's (per
//!   step: the median kernel time of the ranks over rank N's);
//! * `comm=0` (or `=-50%`): collectives' transfers and communication kernels;
//! * `launch=0` (or a share): launch calls and launch latencies.

use regex::Regex;
use unitrace_core::timeline::names::strip_shape;

use crate::time::{parse_duration, Ns};

/// The most rules a rank's replay carries, the implicit ones with the
/// user's: its lanes are arrays of a fixed length (`graph/replay.rs`), the
/// longest of 64 (docs/tracestat.md#what-if).
pub const MOST_RULES: usize = 62;

/// How a duration changes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// Multiplied by this factor (`-20%` is 0.8).
    Scale(f64),
    /// Set to this (`5us`).
    Set(Ns),
    /// Shortened by this (`-3us`), not below 0.
    Less(Ns),
}

impl Change {
    pub fn apply(self, d: Ns) -> Ns {
        match self {
            Change::Scale(f) => (d as f64 * f).round() as Ns,
            Change::Set(v) => v,
            Change::Less(v) => (d - v).max(0),
        }
    }

    /// The factor of a share (`Set`/`Less` have none).
    pub fn factor(self) -> Option<f64> {
        match self {
            Change::Scale(f) => Some(f),
            _ => None,
        }
    }
}

/// What a rule changes.
#[derive(Debug, Clone)]
pub enum Target {
    Kernel(Regex),
    Range(Regex),
    /// Rank N's kernels as fast as the median rank's.
    RankMedian(u32),
    Comm,
    Launch,
}

/// One parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// As written.
    pub text: String,
    pub target: Target,
    pub change: Change,
}

impl Rule {
    /// Whether the rule changes kernels called `name` (full name).
    pub fn matches_kernel(&self, name: &str) -> bool {
        match &self.target {
            Target::Kernel(re) => re.is_match(strip_shape(name)),
            _ => false,
        }
    }
}

/// A shell glob (`*`, `?`, `[...]`) as an anchored regex.
fn glob_regex(glob: &str) -> Result<Regex, String> {
    let mut re = String::from("^");
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            '[' => {
                let mut class = String::new();
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == ']' {
                        closed = true;
                        break;
                    }
                    class.push(d);
                }
                if !closed || class.is_empty() {
                    return Err(format!("`{glob}`: an unclosed or empty `[...]`"));
                }
                let negate = class.starts_with('!');
                let body = if negate { &class[1..] } else { &class[..] };
                re.push('[');
                if negate {
                    re.push('^');
                }
                for d in body.chars() {
                    if d == '\\' || d == '[' || d == ']' || d == '^' {
                        re.push('\\');
                    }
                    re.push(d);
                }
                re.push(']');
            }
            _ => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    Regex::new(&re).map_err(|e| format!("`{glob}`: {e}"))
}

/// A change: `-20%`, `+10%`, `0`, `5us`, `-3us`.
fn parse_change(v: &str, absolute_ok: bool) -> Result<Change, String> {
    let v = v.trim();
    if v == "0" {
        return Ok(Change::Scale(0.0));
    }
    if let Some(p) = v.strip_suffix('%') {
        let pct: f64 = p
            .parse()
            .map_err(|_| format!("`{v}`: a share like -20% or +10%"))?;
        if !pct.is_finite() || pct < -100.0 {
            return Err(format!("`{v}`: a share from -100% up"));
        }
        return Ok(Change::Scale(1.0 + pct / 100.0));
    }
    if !absolute_ok {
        return Err(format!("`{v}`: a share like -30%, or 0"));
    }
    if let Some(d) = v.strip_prefix('-') {
        return Ok(Change::Less(parse_duration(d)?));
    }
    Ok(Change::Set(parse_duration(v.trim_start_matches('+'))?))
}

/// Parses one `--what-if` rule.
pub fn parse_rule(text: &str) -> Result<Rule, String> {
    let (lhs, rhs) = text
        .rsplit_once('=')
        .ok_or_else(|| format!("`{text}`: RULE=CHANGE, e.g. kernel:gemm*=-20%"))?;
    if let Some(("kernel" | "range", "")) = lhs.split_once(':') {
        return Err(format!(
            "`{text}`: a name pattern after the colon, e.g. kernel:gemm*"
        ));
    }
    let (target, change) = if let Some(g) = lhs.strip_prefix("kernel:") {
        (Target::Kernel(glob_regex(g)?), parse_change(rhs, true)?)
    } else if let Some(g) = lhs.strip_prefix("range:") {
        (Target::Range(glob_regex(g)?), parse_change(rhs, false)?)
    } else if let Some(n) = lhs.strip_prefix("rank:") {
        let n: u32 = n
            .parse()
            .map_err(|_| format!("`{text}`: rank:N=median with a rank number N"))?;
        if rhs != "median" {
            return Err(format!("`{text}`: rank:N takes `=median`"));
        }
        (Target::RankMedian(n), Change::Scale(1.0))
    } else if lhs == "comm" {
        (Target::Comm, parse_change(rhs, false)?)
    } else if lhs == "launch" {
        (Target::Launch, parse_change(rhs, false)?)
    } else {
        return Err(format!(
            "`{text}`: kernel:GLOB=, range:GLOB=, rank:N=median, comm= or launch="
        ));
    };
    Ok(Rule {
        text: text.to_string(),
        target,
        change,
    })
}

/// Parses every rule (they were checked on the command line).
pub fn parse_rules(texts: &[String]) -> Vec<Rule> {
    texts.iter().filter_map(|t| parse_rule(t).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse() {
        let r = parse_rule("kernel:gemm*=-20%").unwrap();
        assert!(r.matches_kernel("gemm_kernel[SIMD8 {512; 1; 1} {128; 1; 1}]"));
        assert!(!r.matches_kernel("agemm"));
        assert_eq!(r.change.apply(1000), 800);
        assert_eq!(
            parse_rule("kernel:k=5us").unwrap().change,
            Change::Set(5000)
        );
        assert_eq!(
            parse_rule("kernel:k=-3us").unwrap().change,
            Change::Less(3000)
        );
        assert_eq!(parse_rule("comm=0").unwrap().change, Change::Scale(0.0));
        assert!(parse_rule("range:x=5us").is_err());
        assert!(matches!(
            parse_rule("rank:3=median").unwrap().target,
            Target::RankMedian(3)
        ));
        assert!(parse_rule("rank:x=median").is_err());
        assert!(parse_rule("bogus=1").is_err());
        assert!(parse_rule("kernel:=-20%").is_err());
        assert!(parse_rule("range:=-20%").is_err());
        assert!(glob_regex("a[b").is_err());
        assert!(glob_regex("f?o[!x].*").unwrap().is_match("foo1.rs"));
    }
}
