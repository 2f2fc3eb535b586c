//! Joins the memory and compute profiles per kernel and computes what the
//! page and the data table show (docs/compatibility.md#roofline-aggregation and #roofline-page).
//!
//! Units: operation counts are operations, bytes are bytes, times ns; the
//! arithmetic intensity is ops/byte, performance GFLOP/s = ops / ns, and a
//! roof is `min(AI × BW[GB/s], peak[GFLOP/s])`, all in decimal units
//! (10^9), the units of the device file. The original's bound column in the
//! console summary mixes GiB into this (docs/compatibility.md#roofline-5); the summary
//! keeps that for drop-in output (see `summary.rs`), the page and `--data`
//! do not.
//!
//! Each kernel is placed against its own dominant precision (the one with
//! its largest operation count) and that precision's peak; the original
//! plotted one precision for the whole run, so on a mixed workload most
//! kernels showed 0 GFLOP/s (docs/compatibility.md#roofline-11).

use std::collections::HashSet;

use unitrace_core::device_config::{DeviceConfig, Precision};
use unitrace_core::roofline_profile::{ComputeProfile, MemoryProfile, Num};

/// Kernels whose share of the total time is not above this percentage are
/// not plotted (the original's threshold, docs/compatibility.md#roofline-page).
pub const MIN_TIME_PCT: f64 = 0.001;

#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    pub time_ns: Num,
    pub memory_instances: u64,
    pub compute_instances: u64,
    pub frequency_mhz: f64,
    pub occupancy_pct: f64,
    /// Bytes per level of [`Roofline::levels`]; `None` if not profiled.
    pub bytes: Vec<Option<Num>>,
    /// Operations per precision ([`Precision::index`]).
    pub ops: [Num; 5],
    pub xmx_fp16_utilization: f64,
}

#[derive(Debug, Clone)]
pub struct Level {
    pub key: String,
    pub label: String,
    pub bandwidth_gb_per_s: f64,
    /// The memory profile has byte counters for this level.
    pub present: bool,
}

/// One kernel at one memory level.
#[derive(Debug, Clone)]
pub struct Point {
    pub level: usize,
    pub bytes: f64,
    /// ops / bytes; infinite when the level moved no byte.
    pub ai: f64,
    pub gflops: f64,
    /// `min(AI × BW, peak)`.
    pub roof_gflops: f64,
    pub pct_of_roof: f64,
    /// The bandwidth slope (not the peak) limits the roof at this AI.
    pub memory_bound: bool,
    /// Measured performance above the roof: a counting or unit error.
    pub above_roof: bool,
    /// Drawn on the chart (kernel above the threshold and a finite AI).
    pub plotted: bool,
}

#[derive(Debug, Clone)]
pub struct KernelView {
    pub kernel: usize,
    pub time_pct: f64,
    /// The kernel's dominant precision (largest operation count), against
    /// whose peak it is placed; `None` when it counted no operation.
    pub precision: Option<Precision>,
    /// Operations of that precision.
    pub ops: f64,
    pub gflops: f64,
    /// Above the time threshold and with a non-zero operation count.
    pub selected: bool,
    pub points: Vec<Point>,
    /// Index into `points` of the lowest roof (the binding one); `None`
    /// when the kernel counted no operation.
    pub binding: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct Roofline {
    pub device: DeviceConfig,
    pub levels: Vec<Level>,
    /// Kernels present in both profiles, longest (memory-run time) first.
    pub kernels: Vec<Kernel>,
    /// Σ time of every kernel of the memory profile (also those missing
    /// from the compute profile, as the original).
    pub total_time_ns: Num,
    pub only_in_memory: Vec<String>,
    pub only_in_compute: Vec<String>,
    /// (kernel, instances in memory run, instances in compute run).
    pub instance_mismatch: Vec<(String, u64, u64)>,
    /// Precisions with a non-zero total operation count, in
    /// [`Precision::ALL`] order: the compute roofs the page draws.
    pub precisions: Vec<Precision>,
}

impl Roofline {
    /// The memory levels the memory profile measured, with their index in
    /// `levels` (which picks their colour): the ones drawn and tabulated.
    pub fn present_levels(&self) -> Vec<(usize, &Level)> {
        self.levels
            .iter()
            .enumerate()
            .filter(|(_, l)| l.present)
            .collect()
    }

    pub fn join(memory: MemoryProfile, compute: ComputeProfile, device: DeviceConfig) -> Roofline {
        let by_name = compute.by_name();
        let memory_names: HashSet<&str> = memory.kernels.iter().map(|k| k.name.as_str()).collect();
        let only_in_compute: Vec<String> = compute
            .kernels
            .iter()
            .filter(|k| !memory_names.contains(k.name.as_str()))
            .map(|k| k.name.clone())
            .collect();
        let mut kernels = Vec::new();
        let mut only_in_memory = Vec::new();
        let mut instance_mismatch = Vec::new();
        for m in &memory.kernels {
            let Some(c) = by_name.get(m.name.as_str()) else {
                only_in_memory.push(m.name.clone());
                continue;
            };
            if m.instances != c.instances {
                instance_mismatch.push((m.name.clone(), m.instances, c.instances));
            }
            kernels.push(Kernel {
                name: m.name.clone(),
                time_ns: m.time_ns,
                memory_instances: m.instances,
                compute_instances: c.instances,
                frequency_mhz: m.frequency_mhz,
                occupancy_pct: m.occupancy_pct,
                bytes: m.bytes.clone(),
                ops: c.ops,
                xmx_fp16_utilization: c.xmx_fp16_utilization,
            });
        }
        let levels = device
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| Level {
                key: l.key.clone(),
                label: l.label(),
                bandwidth_gb_per_s: l.bandwidth_gb_per_s,
                present: memory.level_present.get(i).copied().unwrap_or(false),
            })
            .collect();
        let precisions = Precision::ALL
            .into_iter()
            .filter(|p| kernels.iter().any(|k| k.ops[p.index()].as_f64() > 0.0))
            .collect();
        Roofline {
            device,
            levels,
            kernels,
            total_time_ns: memory.total_time_ns,
            only_in_memory,
            only_in_compute,
            instance_mismatch,
            precisions,
        }
    }

    /// `t × 100 / total` as the original computes it (int arithmetic first
    /// when both are integers).
    pub fn time_pct(&self, k: &Kernel) -> f64 {
        match (k.time_ns, self.total_time_ns) {
            (Num::Int(t), Num::Int(total)) => t.saturating_mul(100) as f64 / total as f64,
            (t, total) => t.as_f64() * 100.0 / total.as_f64(),
        }
    }

    pub fn views(&self) -> Vec<KernelView> {
        self.kernels
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let time_pct = self.time_pct(k);
                let precision = dominant_precision(k);
                // A kernel without operations keeps its points (bytes, AI
                // 0) in `--data` but is not plotted; any peak does.
                let peak = self.device.peak(precision.unwrap_or(Precision::Fp32));
                let ops = precision.map_or(0.0, |p| k.ops[p.index()].as_f64());
                let t = k.time_ns.as_f64();
                let gflops = ops / t;
                let selected = time_pct > MIN_TIME_PCT && ops > 0.0;
                let mut points = Vec::new();
                for (li, level) in self.levels.iter().enumerate() {
                    let Some(Some(bytes)) = k.bytes.get(li) else {
                        continue;
                    };
                    if !level.present {
                        continue;
                    }
                    let bytes = bytes.as_f64();
                    let ai = if bytes > 0.0 {
                        ops / bytes
                    } else {
                        f64::INFINITY
                    };
                    let slope = ai * level.bandwidth_gb_per_s;
                    let roof = slope.min(peak);
                    let pct = gflops / roof * 100.0;
                    points.push(Point {
                        level: li,
                        bytes,
                        ai,
                        gflops,
                        roof_gflops: roof,
                        pct_of_roof: pct,
                        memory_bound: slope < peak,
                        // A relative margin keeps rounding noise from
                        // flagging kernels that sit exactly on the roof.
                        above_roof: gflops > roof * (1.0 + 1e-9),
                        plotted: selected
                            && ai.is_finite()
                            && ai > 0.0
                            && gflops.is_finite()
                            && gflops > 0.0,
                    });
                }
                let binding = points
                    .iter()
                    .filter(|_| ops > 0.0)
                    .enumerate()
                    .filter(|(_, pt)| pt.roof_gflops.is_finite())
                    .fold(None::<(usize, f64)>, |best, (j, pt)| match best {
                        Some((_, r)) if r <= pt.roof_gflops => best,
                        _ => Some((j, pt.roof_gflops)),
                    })
                    .map(|(j, _)| j);
                KernelView {
                    kernel: i,
                    time_pct,
                    precision,
                    ops,
                    gflops,
                    selected,
                    points,
                    binding,
                }
            })
            .collect()
    }
}

/// The kernel's precision with the largest operation count (ties: the
/// first in [`Precision::ALL`] order, FP16, FP16_XMX, BF16_XMX, FP32,
/// FP64, the order in which the original breaks ties); `None` when it
/// counted no operation at all.
pub fn dominant_precision(k: &Kernel) -> Option<Precision> {
    let mut best: Option<(Precision, f64)> = None;
    for p in Precision::ALL {
        let n = k.ops[p.index()].as_f64();
        if n > 0.0 && best.is_none_or(|(_, b)| n > b) {
            best = Some((p, n));
        }
    }
    best.map(|(p, _)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(ops: [i128; 5]) -> Kernel {
        Kernel {
            name: "k".into(),
            time_ns: Num::Int(1000),
            memory_instances: 1,
            compute_instances: 1,
            frequency_mhz: f64::NAN,
            occupancy_pct: f64::NAN,
            bytes: vec![Some(Num::Int(10)), Some(Num::Int(10))],
            ops: ops.map(Num::Int),
            xmx_fp16_utilization: 0.0,
        }
    }

    #[test]
    fn dominant_precision_is_the_largest_count_ties_to_the_first() {
        // Index order: FP16, FP16_XMX, BF16_XMX, FP32, FP64.
        assert_eq!(
            dominant_precision(&kernel([5, 0, 0, 5, 0])),
            Some(Precision::Fp16)
        );
        assert_eq!(
            dominant_precision(&kernel([0, 0, 7, 0, 7])),
            Some(Precision::Bf16Xmx)
        );
        assert_eq!(
            dominant_precision(&kernel([0, 3, 0, 3, 9])),
            Some(Precision::Fp64)
        );
        assert_eq!(dominant_precision(&kernel([0, 0, 0, 0, 0])), None);
    }
}
