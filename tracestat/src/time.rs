//! Report numbers of trace times (the times themselves are read by
//! `unitrace_core::timeline::time`, docs/tracestat.md#inputs).

pub use unitrace_core::timeline::time::us_text_to_ns;
pub use unitrace_core::timeline::Ns;

/// Nanoseconds as microseconds, for reports.
pub fn us(ns: Ns) -> f64 {
    ns as f64 / 1000.0
}

/// `100 * part / whole`, 0 when `whole` is 0.
pub fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        0.0
    }
}

/// A duration in its largest whole unit (`10 us`, `2 ms`, `1500 ns`).
pub fn duration_text(ns: Ns) -> String {
    for (unit, scale) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
        if ns != 0 && ns % scale == 0 {
            return format!("{} {unit}", ns / scale);
        }
    }
    format!("{ns} ns")
}

/// Parses a duration like `10us`, `2.5ms`, `1s`, `500ns` (bare numbers are
/// microseconds) into nanoseconds.
pub fn parse_duration(text: &str) -> Result<Ns, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a duration (e.g. 10us, 2ms)"))?;
    let scale = match unit.trim() {
        "ns" => 1.0,
        "" | "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => {
            return Err(format!(
                "unknown unit '{other}' in '{text}' (ns, us, ms, s)"
            ))
        }
    };
    let ns = (v * scale).round();
    if !ns.is_finite() || ns > 9.0e18 {
        return Err(format!("'{text}' is too large"));
    }
    Ok(ns as Ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("10us"), Ok(10_000));
        assert_eq!(parse_duration("10"), Ok(10_000));
        assert_eq!(parse_duration("2.5ms"), Ok(2_500_000));
        assert_eq!(parse_duration("1s"), Ok(1_000_000_000));
        assert_eq!(parse_duration("500ns"), Ok(500));
        assert!(parse_duration("5 parsecs").is_err());
    }
}
