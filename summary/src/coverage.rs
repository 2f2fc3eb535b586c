//! The coverage report: how much device time no schema rule matched (it
//! went to the default category, the silent "other" of every categoriser),
//! its biggest names, and the rules that matched no name.

use unitrace_core::cli::escape_controls;

const TOOL: &str = "summary";

/// The uncategorised share of device time and its biggest names.
pub struct Coverage {
    pub default_category: &'static str,
    pub kernel_time: f64,
    pub default_time: f64,
    pub default_names: usize,
    pub top: Vec<(String, f64)>,
    pub unmatched_rules: Vec<(String, String, String)>,
    pub rules_total: usize,
}

/// One line on stderr when device time fell into the default category (the
/// silent "other" of every categoriser); the full report with -v.
pub fn report_coverage(coverage: &Coverage, verbose: u8) {
    if coverage.default_time > 0.0 && coverage.kernel_time > 0.0 {
        let share = 100.0 * coverage.default_time / coverage.kernel_time;
        let top = coverage
            .top
            .iter()
            .take(3)
            .map(|(n, t)| {
                format!(
                    "{} ({:.1}%)",
                    shorten(n, 60),
                    100.0 * t / coverage.kernel_time
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        // Kernel names are input: their control bytes are escaped on
        // every line printed (docs/robustness.md#messages).
        let note = format!(
            "{TOOL}: note: {share:.1}% of device time ({} kernel names) matched no rule and went to \"{}\"; biggest: {top}; see --format table",
            coverage.default_names, coverage.default_category
        );
        eprintln!("{}", escape_controls(&note));
    }
    if verbose >= 1 {
        for line in coverage_lines(coverage) {
            eprintln!("{TOOL}: {line}");
        }
    }
}

pub fn shorten(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_string();
    }
    let head: String = name.chars().take(max - 1).collect();
    format!("{head}…")
}

/// The coverage report: default-category share with its top names, and the
/// schema rules that matched no name; control bytes of names escaped.
pub fn coverage_lines(coverage: &Coverage) -> Vec<String> {
    let mut lines = Vec::new();
    let share = if coverage.kernel_time > 0.0 {
        100.0 * coverage.default_time / coverage.kernel_time
    } else {
        0.0
    };
    lines.push(format!(
        "uncategorized: {share:.1}% of device kernel time in default category \"{}\" ({} names)",
        coverage.default_category, coverage.default_names
    ));
    for (name, t) in &coverage.top {
        let pct = if coverage.kernel_time > 0.0 {
            100.0 * t / coverage.kernel_time
        } else {
            0.0
        };
        lines.push(format!(
            "  {pct:5.1}%  {:.3} ms  {}",
            t / 1e6,
            shorten(name, 120)
        ));
    }
    lines.push(format!(
        "rules that matched nothing: {} of {}",
        coverage.unmatched_rules.len(),
        coverage.rules_total
    ));
    for (kind, tag, category) in &coverage.unmatched_rules {
        lines.push(format!("  [{category} if {kind}] {tag}"));
    }
    lines.iter().map(|l| escape_controls(l)).collect()
}
