//! How numbers and times are spelled in the console, Markdown, page and
//! messages (docs/compare.md#output): fixed decimals, so outputs are
//! byte-identical run to run.

/// A time in microseconds, in the unit that reads best.
pub fn fmt_us(us: f64) -> String {
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
