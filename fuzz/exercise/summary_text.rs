//! Text summaries written by unitrace (docs/formats.md#summary-text, the logs `summary`
//! reads, `unitrace_core::summary_text`): any text gives a summary or an
//! error at a line inside the text, never a panic.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/summary_text/*`).

use unitrace_core::summary_text::{normalize_kernel_name, parse_summary};

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = normalize_kernel_name(&text);
    match parse_summary(&text) {
        Ok(summary) => {
            for report in &summary.reports {
                assert!(report.first_line >= 1);
                let _ = report.device.is_empty();
            }
        }
        Err(e) => {
            let lines = text.lines().count() as u64 + 1;
            assert!(
                e.line <= lines.max(1),
                "error at line {} of {lines}",
                e.line
            );
            assert!(!e.problem.is_empty());
        }
    }
}
