//! Python's float spellings, shared by every tool whose output must match an
//! original script byte for byte.
//!
//! * [`float_repr`]: `repr(float)` (and numpy's `str(float64)`, which follows
//!   it): the shortest digits that round-trip, in fixed notation when the
//!   decimal exponent is in -4..16 and in scientific notation (`1e-05`,
//!   `2.5e+16`) otherwise; `nan`, `inf`, `-inf`. The roofline console summary
//!   and data file print floats this way (docs/compatibility.md#roofline-summary).
//! * [`json_float`]: the same digits as written by `json.dump`, which spells
//!   the non-finite values `NaN`, `Infinity`, `-Infinity` (categorize's
//!   schema and summary's JSON).

/// Formats `x` like Python's `repr(x)`.
pub fn float_repr(x: f64) -> String {
    spell(x, ["nan", "inf", "-inf"])
}

/// Formats `x` like Python's `json.dumps(x)`.
pub fn json_float(x: f64) -> String {
    spell(x, ["NaN", "Infinity", "-Infinity"])
}

/// `x` with the given spellings of NaN, +infinity and -infinity.
fn spell(x: f64, [nan, inf, neg_inf]: [&str; 3]) -> String {
    if x.is_nan() {
        nan.to_string()
    } else if x.is_infinite() {
        if x > 0.0 { inf } else { neg_inf }.to_string()
    } else {
        finite_repr(x)
    }
}

fn finite_repr(x: f64) -> String {
    // Rust's `{:e}` yields the shortest round-trip digits: `d.ddde<exp>`.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    // Position of the decimal point relative to the first digit.
    let decpt = exp + 1;
    let n = digits.len() as i32;
    let body = if decpt <= -4 || decpt > 16 {
        let (first, rest) = digits.split_at(1);
        let mant = if rest.is_empty() {
            first.to_string()
        } else {
            format!("{first}.{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{esign}{:02}", exp.abs())
    } else if decpt <= 0 {
        format!("0.{}{}", "0".repeat((-decpt) as usize), digits)
    } else if decpt < n {
        let (int, frac) = digits.split_at(decpt as usize);
        format!("{int}.{frac}")
    } else {
        format!("{}{}.0", digits, "0".repeat((decpt - n) as usize))
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::{float_repr, json_float};

    #[test]
    fn matches_python_repr() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (0.009238, "0.009238"),
            (94.2487645025567, "94.2487645025567"),
            (2097152000000.0, "2097152000000.0"),
            (1e16, "1e+16"),
            (1234567890123456.0, "1234567890123456.0"),
            (1.5e16, "1.5e+16"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (1e100, "1e+100"),
            (0.033637684999999994, "0.033637684999999994"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (-2.5, "-2.5"),
            (123.0, "123.0"),
            (40372986.666666664, "40372986.666666664"),
            (14.333333333333332, "14.333333333333332"),
            (1.2345678901234568e18, "1.2345678901234568e+18"),
            (146497735.0, "146497735.0"),
        ];
        for (x, want) in cases {
            assert_eq!(float_repr(*x), *want, "repr({x:e})");
        }
    }

    #[test]
    fn json_spells_non_finite_like_json_dumps() {
        assert_eq!(json_float(f64::NAN), "NaN");
        assert_eq!(json_float(f64::INFINITY), "Infinity");
        assert_eq!(json_float(f64::NEG_INFINITY), "-Infinity");
        // Finite values are spelt exactly as by `repr`.
        for x in [0.0, -0.0, 1e16, 0.00001, -2.5, 40372986.666666664] {
            assert_eq!(json_float(x), float_repr(x));
        }
    }
}
