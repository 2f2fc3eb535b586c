//! Command-line values: sizes (`500MB`, `4MiB`), rank lists with an
//! optional cut mode (`1,3-5`, `1:event,2:block`), straggler choices.

use crate::trace::output::CutMode;

/// A byte count: a number with an optional unit, `KB`/`MB`/`GB`/`TB`
/// (powers of 1000) or `KiB`/`MiB`/`GiB`/`TiB` (powers of 1024); a bare
/// number is bytes. Decimals are allowed (`1.5GB`).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a size (e.g. 500MB, 4MiB, 12345)"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0f64.powi(4),
        _ => {
            return Err(format!(
                "'{text}': unknown unit '{unit}' (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"
            ))
        }
    };
    let bytes = value * scale;
    if !bytes.is_finite() || bytes < 1.0 {
        return Err(format!("'{text}' is not a positive size"));
    }
    Ok(bytes.round() as u64)
}

/// Ranks to cut (`--cut`): items separated by commas or blanks, each a rank
/// or an inclusive range, optionally followed by `:MODE`
/// (`1`, `0-3,7`, `1:event,2:block`); items without a mode get `default`.
pub fn parse_cuts(values: &[String], default: CutMode) -> Result<Vec<(u32, CutMode)>, String> {
    let mut out: Vec<(u32, CutMode)> = Vec::new();
    for value in values {
        for item in value
            .split([',', ' '])
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            let (ranks, mode) = match item.split_once(':') {
                Some((r, m)) => (r, parse_mode(m)?),
                None => (item, default),
            };
            let (a, b) = ranks.split_once('-').unwrap_or((ranks, ranks));
            let num = |s: &str| {
                s.trim()
                    .parse::<u32>()
                    .map_err(|_| format!("bad rank '{s}' in --cut '{value}'"))
            };
            let (a, b) = (num(a)?, num(b)?);
            if b < a {
                return Err(format!("empty rank range '{ranks}' in --cut"));
            }
            for r in a..=b {
                match out.iter_mut().find(|(x, _)| *x == r) {
                    Some(slot) => slot.1 = mode,
                    None => out.push((r, mode)),
                }
            }
        }
    }
    Ok(out)
}

fn parse_mode(text: &str) -> Result<CutMode, String> {
    match text.trim() {
        "block" => Ok(CutMode::Block),
        "event" => Ok(CutMode::Event),
        "header" => Ok(CutMode::Header),
        "empty" => Ok(CutMode::Empty),
        other => Err(format!(
            "unknown cut mode '{other}' (block, event, header, empty)"
        )),
    }
}

/// `--straggler`: a rank, or `none`.
pub fn parse_straggler(text: &str) -> Result<Option<u32>, String> {
    match text.trim() {
        "none" | "-1" => Ok(None),
        t => t
            .parse()
            .map(Some)
            .map_err(|_| format!("'{text}' is neither a rank nor 'none'")),
    }
}

/// `--slow-step RANK:STEP[:FACTOR]`: that rank's compute kernels in that
/// step take FACTOR times as long (default [`SLOW_STEP_FACTOR`]).
pub fn parse_slow_step(text: &str) -> Result<(u32, u32, f64), String> {
    let bad = || format!("'{text}' is not RANK:STEP or RANK:STEP:FACTOR (e.g. 1:3 or 1:3:2.5)");
    let parts: Vec<&str> = text.trim().split(':').collect();
    let (rank, step, factor) = match parts.as_slice() {
        [r, s] => (r, s, None),
        [r, s, f] => (r, s, Some(f)),
        _ => return Err(bad()),
    };
    let rank = rank.parse().map_err(|_| bad())?;
    let step = step.parse().map_err(|_| bad())?;
    let factor = match factor {
        Some(f) => f.parse::<f64>().map_err(|_| bad())?,
        None => SLOW_STEP_FACTOR,
    };
    if !(factor.is_finite() && factor > 0.0) {
        return Err(format!("'{text}': the factor must be a positive number"));
    }
    Ok((rank, step, factor))
}

/// The compute-time factor of `--slow-step` when none is given.
pub const SLOW_STEP_FACTOR: f64 = 3.0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("500MB"), Ok(500_000_000));
        assert_eq!(parse_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("123"), Ok(123));
        assert!(parse_size("5 parsecs").is_err());
        assert!(parse_size("0").is_err());
    }

    #[test]
    fn cut_lists() {
        let cuts = parse_cuts(&["1:event,2-3".into(), "5".into()], CutMode::Block).unwrap();
        assert_eq!(
            cuts,
            vec![
                (1, CutMode::Event),
                (2, CutMode::Block),
                (3, CutMode::Block),
                (5, CutMode::Block)
            ]
        );
        assert!(parse_cuts(&["3-1".into()], CutMode::Block).is_err());
        assert!(parse_cuts(&["1:bad".into()], CutMode::Block).is_err());
    }
}
