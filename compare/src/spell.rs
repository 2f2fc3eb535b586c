//! How numbers and times are spelled in the console, Markdown, page and
//! messages (docs/compare.md#output): fixed decimals, so outputs are
//! byte-identical run to run.

/// A time in microseconds, in the unit that reads best.
pub fn fmt_us(us: f64) -> String {
    // What rounds to zero is spelled without a sign: an empty sum is -0.0
    // in Rust, and a tiny negative would read "-0.000 us".
    let us = if us.abs() < 0.0005 { 0.0 } else { us };
    let a = us.abs();
    if a >= 1e6 {
        format!("{:.3} s", us / 1e6)
    } else if a >= 1e3 {
        format!("{:.3} ms", us / 1e3)
    } else {
        format!("{us:.3} us")
    }
}

pub fn fmt_num(v: f64) -> String {
    let v = v + 0.0; // -0.0 spelled "0"
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

pub fn signed_us(us: f64) -> String {
    if us > 0.0 {
        format!("+{}", fmt_us(us))
    } else {
        fmt_us(us)
    }
}

pub fn signed_pct(v: f64) -> String {
    format!("{v:+.1}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_is_spelled_without_a_sign() {
        let empty: f64 = std::iter::empty::<f64>().sum();
        assert_eq!(fmt_us(empty), "0.000 us");
        assert_eq!(fmt_us(-0.0004), "0.000 us");
        assert_eq!(fmt_us(-0.0006), "-0.001 us");
        assert_eq!(fmt_num(-0.0), "0");
        assert_eq!(signed_us(-0.0), "0.000 us");
    }
}
