//! When a change counts (docs/compare.md#significance): a change is
//! significant when it exceeds the threshold, relative AND absolute, and,
//! with repeated runs, the run-to-run noise: the two-sided Welch t-test on
//! the per-run values rejects "no change" at level `alpha`. The spread
//! between ranks or kernel instances of one run is not noise: it is
//! systematic, the same in every run.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Default relative threshold, percent: above the 1-3% by which kernel
/// times of one program differ between runs on an idle GPU
/// (docs/compare.md#significance).
pub const DEFAULT_THRESHOLD_PCT: f64 = 5.0;
/// Default absolute threshold, microseconds: one kernel launch's latency;
/// smaller changes of a short kernel are timer and launch jitter.
pub const DEFAULT_THRESHOLD_US: f64 = 10.0;
/// Default level of the run-to-run test.
pub const DEFAULT_ALPHA: f64 = 0.05;

/// The significance rule of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rule {
    /// A change must exceed this percent of the baseline...
    pub threshold_pct: f64,
    /// ...and this many microseconds.
    pub threshold_us: f64,
    /// Level of the two-sided test on repeated runs.
    pub alpha: f64,
}

impl Default for Rule {
    fn default() -> Rule {
        Rule {
            threshold_pct: DEFAULT_THRESHOLD_PCT,
            threshold_us: DEFAULT_THRESHOLD_US,
            alpha: DEFAULT_ALPHA,
        }
    }
}

/// How the noise is measured, from the number of runs per side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// One run per side: no noise is known; the threshold alone decides.
    ThresholdOnly,
    /// Several runs on one side only: Student's t with that side's
    /// variance for both (the single run is assumed as noisy).
    OneSidedVariance,
    /// Several runs on both sides: Welch's unequal-variance t-test.
    Welch,
}

impl Test {
    pub fn of(baseline_runs: usize, candidate_runs: usize) -> Test {
        match (baseline_runs >= 2, candidate_runs >= 2) {
            (false, false) => Test::ThresholdOnly,
            (true, true) => Test::Welch,
            _ => Test::OneSidedVariance,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Test::ThresholdOnly => "threshold only",
            Test::OneSidedVariance => "t-test, one side's variance",
            Test::Welch => "Welch t-test",
        }
    }
}

/// The verdict on one change.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Judgement {
    /// Standard deviation over the baseline's runs (two runs or more).
    pub baseline_sd_us: Option<f64>,
    pub candidate_sd_us: Option<f64>,
    /// Half-width of the `1 - alpha` confidence interval of the delta: the
    /// run-to-run noise (with repeated runs).
    pub noise_us: Option<f64>,
    /// Two-sided p-value of "no change" (with repeated runs).
    pub p_value: Option<f64>,
    /// Beyond the threshold (relative and absolute).
    pub beyond_threshold: bool,
    pub significant: bool,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Sample variance (n - 1), for two values or more.
fn variance(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let m = mean(v);
    Some(v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64)
}

/// Beyond both thresholds: `|delta|` above the absolute one and above the
/// relative one of the baseline (a zero baseline: any change is relatively
/// infinite).
pub fn beyond_threshold(baseline: f64, delta: f64, rule: &Rule) -> bool {
    let relative = baseline == 0.0 || delta.abs() * 100.0 / baseline.abs() > rule.threshold_pct;
    delta.abs() > rule.threshold_us && relative && delta != 0.0
}

/// Standard error of the delta and its degrees of freedom, when a side has
/// repeated runs.
fn standard_error(base: &[f64], cand: &[f64]) -> Option<(f64, f64)> {
    let (nb, nc) = (base.len() as f64, cand.len() as f64);
    match (variance(base), variance(cand)) {
        (Some(vb), Some(vc)) => {
            let (qb, qc) = (vb / nb, vc / nc);
            let v = qb + qc;
            let df = if v > 0.0 {
                v * v / (qb * qb / (nb - 1.0) + qc * qc / (nc - 1.0))
            } else {
                nb + nc - 2.0
            };
            Some((v.sqrt(), df))
        }
        (Some(v), None) => Some(((v * (1.0 / nb + 1.0 / nc)).sqrt(), nb - 1.0)),
        (None, Some(v)) => Some(((v * (1.0 / nb + 1.0 / nc)).sqrt(), nc - 1.0)),
        (None, None) => None,
    }
}

/// Judges the change from `base` to `cand`, the per-run values of one row.
pub fn judge(base: &[f64], cand: &[f64], rule: &Rule) -> Judgement {
    let (mb, mc) = (mean(base), mean(cand));
    let delta = mc - mb;
    let beyond = beyond_threshold(mb, delta, rule);
    let mut j = Judgement {
        baseline_sd_us: variance(base).map(f64::sqrt),
        candidate_sd_us: variance(cand).map(f64::sqrt),
        noise_us: None,
        p_value: None,
        beyond_threshold: beyond,
        significant: beyond,
    };
    let Some((se, df)) = standard_error(base, cand) else {
        return j;
    };
    let (noise, p) = if se > 0.0 && df > 0.0 {
        // `new` only fails on a non-positive or NaN freedom, excluded here.
        let t = StudentsT::new(0.0, 1.0, df).expect("positive degrees of freedom");
        let critical = t.inverse_cdf(1.0 - rule.alpha / 2.0);
        (critical * se, (2.0 * t.sf(delta.abs() / se)).min(1.0))
    } else {
        // Identical runs: any change is beyond the noise.
        (0.0, if delta == 0.0 { 1.0 } else { 0.0 })
    };
    j.noise_us = Some(noise);
    j.p_value = Some(p);
    j.significant = beyond && p < rule.alpha;
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Student's t CDF for 4 degrees of freedom in closed form:
    /// F(t) = 1/2 + 3x/4 - x^3/4 with x = t / sqrt(t^2 + 4).
    fn cdf4(t: f64) -> f64 {
        let x = t / (t * t + 4.0).sqrt();
        0.5 + 0.75 * x - 0.25 * x * x * x
    }

    #[test]
    fn welch_on_known_runs() {
        // sd 24 on both sides, delta 16: t = 16 / sqrt(2 * 24^2 / 3).
        let base = [176.0, 200.0, 224.0];
        let cand = [192.0, 216.0, 240.0];
        let j = judge(&base, &cand, &Rule::default());
        assert_eq!(j.baseline_sd_us, Some(24.0));
        assert_eq!(j.candidate_sd_us, Some(24.0));
        let t = 16.0 / (2.0f64 * 576.0 / 3.0).sqrt();
        let p = 2.0 * (1.0 - cdf4(t));
        assert!((j.p_value.unwrap() - p).abs() < 1e-9, "{:?} {p}", j.p_value);
        assert!((p - 0.4601).abs() < 1e-3);
        // +8% and +16 us pass the threshold; the noise does not.
        assert!(j.beyond_threshold && !j.significant);
        // The 97.5% quantile of t(4) is 2.7764.
        let noise = j.noise_us.unwrap();
        assert!((noise / (2.0f64 * 576.0 / 3.0).sqrt() - 2.776445).abs() < 1e-5);
        assert!(noise > 16.0);

        // sd 6, delta 60 (+10%): far beyond the noise.
        let j = judge(
            &[594.0, 600.0, 606.0],
            &[654.0, 660.0, 666.0],
            &Rule::default(),
        );
        let t = 60.0 / (2.0f64 * 36.0 / 3.0).sqrt();
        assert!((j.p_value.unwrap() - 2.0 * (1.0 - cdf4(t))).abs() < 1e-9);
        assert!(j.significant);
    }

    #[test]
    fn one_run_per_side_is_the_threshold() {
        let r = Rule::default();
        // Relative AND absolute.
        assert!(judge(&[100.0], &[111.0], &r).significant);
        assert!(!judge(&[100.0], &[109.0], &r).significant); // 9 us
        assert!(!judge(&[1000.0], &[1040.0], &r).significant); // 4%
        assert!(judge(&[0.0], &[11.0], &r).significant); // new
        assert!(judge(&[60.0], &[0.0], &r).significant); // vanished
        assert!(!judge(&[5.0], &[5.0], &r).significant);
        let j = judge(&[100.0], &[111.0], &r);
        assert_eq!(
            (j.noise_us, j.p_value, j.baseline_sd_us),
            (None, None, None)
        );
        assert_eq!(Test::of(1, 1), Test::ThresholdOnly);
    }

    #[test]
    fn identical_runs_have_no_noise() {
        let r = Rule::default();
        let j = judge(&[100.0, 100.0], &[120.0, 120.0], &r);
        assert_eq!((j.noise_us, j.p_value), (Some(0.0), Some(0.0)));
        assert!(j.significant);
        let j = judge(&[100.0, 100.0], &[100.0, 100.0], &r);
        assert_eq!(j.p_value, Some(1.0));
        assert!(!j.significant);
    }

    #[test]
    fn one_side_repeated_uses_its_variance() {
        // s = 10 over 3 runs, against one run: se = 10 sqrt(1/3 + 1), df 2.
        let j = judge(&[100.0], &[130.0, 140.0, 150.0], &Rule::default());
        let se = 10.0 * (1.0f64 / 3.0 + 1.0).sqrt();
        // t(2) has the closed form F(t) = 1/2 + t / (2 sqrt(2 + t^2)).
        let t = 40.0 / se;
        let p = 2.0 * (0.5 - t / (2.0 * (2.0 + t * t).sqrt()));
        assert!((j.p_value.unwrap() - p).abs() < 1e-9);
        assert_eq!(Test::of(1, 3), Test::OneSidedVariance);
        assert_eq!(Test::of(2, 3), Test::Welch);
    }
}
