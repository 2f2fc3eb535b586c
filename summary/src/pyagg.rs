//! Python number semantics needed to reproduce summary.py's values: ints
//! and floats that stay distinct (`1` vs `1.0` in the JSON), `int + float`,
//! and the aggregators of docs/compatibility.md#summary-aggregation computed from streaming state.

use std::fmt;

use unitrace_core::pyfmt::json_float;

/// A Python `int` or `float` value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PyNum {
    Int(i128),
    Float(f64),
}

impl PyNum {
    /// Python `a + b`: int + int stays int; otherwise both become floats.
    pub fn py_add(self, other: PyNum) -> PyNum {
        match (self, other) {
            (PyNum::Int(a), PyNum::Int(b)) => PyNum::Int(a + b),
            (a, b) => PyNum::Float(a.as_f64() + b.as_f64()),
        }
    }

    /// Python `float(x)` (round half to even, as `as` does).
    pub fn as_f64(self) -> f64 {
        match self {
            PyNum::Int(i) => i as f64,
            PyNum::Float(f) => f,
        }
    }
}

impl fmt::Display for PyNum {
    /// `json.dump` spelling: ints plain, floats as Python `repr`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyNum::Int(i) => write!(f, "{i}"),
            PyNum::Float(x) => f.write_str(&json_float(*x)),
        }
    }
}

/// `--aggregator` of summary.py.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Aggregator {
    Min,
    Max,
    Mean,
    Median,
    Sum,
    #[value(name = "min+1")]
    MinPlus1,
    #[value(name = "max-1")]
    MaxMinus1,
}

/// The samples of one value (time or calls) of one name across files,
/// kept in the smallest form the aggregator needs: every value only for the
/// median, otherwise count, exact sum and the two extremes on each side.
#[derive(Debug, Clone)]
pub struct Samples {
    count: u64,
    sum: i128,
    low: [i64; 2],
    high: [i64; 2],
    all: Vec<i64>,
}

impl Samples {
    pub fn new() -> Samples {
        Samples {
            count: 0,
            sum: 0,
            low: [i64::MAX; 2],
            high: [i64::MIN; 2],
            all: Vec::new(),
        }
    }

    pub fn push(&mut self, v: i64, keep_all: bool) {
        self.count += 1;
        self.sum += v as i128;
        if v < self.low[0] {
            self.low = [v, self.low[0]];
        } else if v < self.low[1] {
            self.low[1] = v;
        }
        if v > self.high[0] {
            self.high = [v, self.high[0]];
        } else if v > self.high[1] {
            self.high[1] = v;
        }
        if keep_all {
            self.all.push(v);
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The aggregated value with summary.py's types: `min`/`max`/`min+1`/
    /// `max-1` give ints, `mean`/`sum` floats, `median` an int for an odd
    /// count and a float for an even one.
    pub fn aggregate(&mut self, aggregator: Aggregator) -> PyNum {
        let n = self.count;
        if n == 0 {
            return PyNum::Int(0);
        }
        // `fsum` of ints below 2**53 is the exactly rounded integer sum.
        let fsum = self.sum as f64;
        match aggregator {
            Aggregator::Min => PyNum::Int(self.low[0] as i128),
            Aggregator::Max => PyNum::Int(self.high[0] as i128),
            Aggregator::Sum => PyNum::Float(fsum),
            Aggregator::Mean => PyNum::Float(fsum / n as f64),
            Aggregator::Median => {
                self.all.sort_unstable();
                let mid = self.all.len() / 2;
                if self.all.len() % 2 == 1 {
                    PyNum::Int(self.all[mid] as i128)
                } else {
                    let pair = self.all[mid - 1] as i128 + self.all[mid] as i128;
                    PyNum::Float(pair as f64 / 2.0)
                }
            }
            Aggregator::MinPlus1 | Aggregator::MaxMinus1 => match n {
                1 => PyNum::Int(self.low[0] as i128),
                2 => PyNum::Int(self.sum.div_euclid(2)),
                _ if aggregator == Aggregator::MinPlus1 => PyNum::Int(self.low[1] as i128),
                _ => PyNum::Int(self.high[1] as i128),
            },
        }
    }
}

impl Default for Samples {
    fn default() -> Self {
        Samples::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agg(values: &[i64], a: Aggregator) -> String {
        let mut s = Samples::new();
        for v in values {
            s.push(*v, a == Aggregator::Median);
        }
        s.aggregate(a).to_string()
    }

    #[test]
    fn aggregators_match_python() {
        // Values checked with Python 3.11: statistics.fmean, median, fsum and
        // summary.py's min_p_1 / max_m_1.
        let v = [40, 10, 30, 10];
        assert_eq!(agg(&v, Aggregator::Min), "10");
        assert_eq!(agg(&v, Aggregator::Max), "40");
        assert_eq!(agg(&v, Aggregator::Mean), "22.5");
        assert_eq!(agg(&v, Aggregator::Median), "20.0");
        assert_eq!(agg(&[3, 1, 2], Aggregator::Median), "2");
        assert_eq!(agg(&v, Aggregator::Sum), "90.0");
        assert_eq!(agg(&v, Aggregator::MinPlus1), "10");
        assert_eq!(agg(&v, Aggregator::MaxMinus1), "30");
        assert_eq!(agg(&[5, 8], Aggregator::MinPlus1), "6");
        assert_eq!(agg(&[7], Aggregator::MaxMinus1), "7");
        assert_eq!(agg(&[1, 2, 2], Aggregator::Mean), "1.6666666666666667");
        assert_eq!(PyNum::Int(3).py_add(PyNum::Float(0.5)).to_string(), "3.5");
    }
}
