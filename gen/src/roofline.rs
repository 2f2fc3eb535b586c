//! `unitrace-gen roofline`: the two profiles a roofline reads
//! (docs/formats.md#roofline-profiles), query files of two runs of the same
//! kernels: the compute profile (VectorEngine138: instructions by
//! precision) and the memory profile (ComputeBasic: bytes at L3 and GPU
//! memory). Both in the current form, the V1 form (trailing separators,
//! per-device sections), or the V0 main log (text summaries, then
//! `== Kernel Metrics ==` with a header before every instance;
//! docs/formats.md#metric-csv-variants).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use unitrace_core::atomic::AtomicFile;

use crate::kernels::{self, MetricKernel, OpsMix};
use crate::metrics::{self, Family, FloatStyle, InstancePlan, MetricWriter, Mode, Spelling};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProfileFormat {
    /// Device banners, `GlobalInstanceId`, no trailing separator.
    New,
    /// As `new` with trailing separators (2024-06 to 2024-12).
    V1,
    /// A V0 main log: summaries, `== Kernel Metrics ==`, a header per
    /// instance, unquoted names, `%g` floats.
    Old,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Precision {
    Mixed,
    #[value(name = "fp16_xmx")]
    Fp16Xmx,
    #[value(name = "bf16_xmx")]
    Bf16Xmx,
    Fp32,
    Fp64,
    Fp16,
}

#[derive(Debug, clap::Args)]
pub struct RooflineArgs {
    /// The compute profile to write (VectorEngine138 group).
    #[arg(long)]
    pub compute: PathBuf,
    /// The memory profile to write (ComputeBasic group).
    #[arg(long)]
    pub memory: PathBuf,
    #[arg(long, default_value_t = 6)]
    pub kernels: u32,
    #[arg(long, default_value_t = 3)]
    pub instances: u32,
    #[arg(long, value_enum, default_value = "new")]
    pub format: ProfileFormat,
    /// What every kernel computes in (`mixed`: each kernel its own mix).
    #[arg(long, value_enum, default_value = "mixed")]
    pub precision: Precision,
    #[arg(long, default_value_t = 1)]
    pub devices: u32,
    #[arg(short, long)]
    pub quiet: bool,
}

/// The kernels of the profiles, with `precision` imposed.
fn profile_kernels(args: &RooflineArgs) -> Vec<MetricKernel> {
    let mut out = Vec::new();
    let mut k = 0;
    while out.len() < args.kernels.max(1) as usize && k < 4 * kernels::KERNELS.len() {
        let mut kernel = *kernels::kernel(k);
        k += 1;
        // Unquoted names of V0 logs cannot hold a comma.
        if args.format == ProfileFormat::Old && kernel.name.contains(',') {
            continue;
        }
        let total = {
            let o = &kernel.ops;
            o.fp16 + o.fp32 + o.fp64 + o.xmx_fp16 + o.xmx_bf16
        };
        let only = |f: fn(&mut OpsMix, f64)| {
            let mut m = OpsMix::default();
            f(&mut m, total);
            m
        };
        kernel.ops = match args.precision {
            Precision::Mixed => kernel.ops,
            Precision::Fp16Xmx => only(|m, t| m.xmx_fp16 = t),
            Precision::Bf16Xmx => only(|m, t| m.xmx_bf16 = t),
            Precision::Fp32 => only(|m, t| m.fp32 = t),
            Precision::Fp64 => only(|m, t| m.fp64 = t / 2.0),
            Precision::Fp16 => only(|m, t| m.fp16 = t),
        };
        out.push(kernel);
    }
    out
}

pub fn run(args: &RooflineArgs, seed: u64) -> Result<()> {
    let kernels = profile_kernels(args);
    let plan = InstancePlan::rounds(&kernels, args.instances, 1, Mode::Query);
    // Two runs of the application: the same kernels, times a little apart.
    write_profile(args, &args.compute, metrics::VECTOR_ENGINE_138, &plan, seed)?;
    write_profile(
        args,
        &args.memory,
        metrics::PVC_COMPUTE_BASIC,
        &plan,
        seed ^ 0x5eed,
    )?;
    if !args.quiet {
        eprintln!(
            "unitrace-gen: {} and {}",
            args.compute.display(),
            args.memory.display()
        );
    }
    Ok(())
}

fn write_profile(
    args: &RooflineArgs,
    path: &Path,
    columns: &'static [&'static str],
    plan: &InstancePlan,
    seed: u64,
) -> Result<()> {
    let old = args.format == ProfileFormat::Old;
    let spelling = Spelling {
        mode: Mode::Query,
        unquoted_padded: old,
        trailing_separator: args.format != ProfileFormat::New,
        floats: if old {
            FloatStyle::General
        } else {
            FloatStyle::Fixed
        },
        banner: !old,
        last_instance_blank: true,
        header_per_instance: old,
    };
    let file =
        AtomicFile::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
    let mut out = BufWriter::new(file);
    if old {
        out.write_all(main_log_summaries(plan).as_bytes())?;
        out.write_all(b"\n\n\n== Kernel Metrics ==\n\n")?;
    }
    let mut w = MetricWriter::new(out, spelling, columns, Family::Pvc, seed);
    let devices = if old { 1 } else { args.devices.max(1) };
    for device in 0..devices {
        w.section(device, plan, None)?;
    }
    let file = w.into_inner().into_inner().map_err(|e| e.into_error())?;
    file.commit()
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// The text reports a V0 main log holds before its metrics: the device
/// timing summary and the kernel properties (docs/formats.md#summary-text-device).
fn main_log_summaries(plan: &InstancePlan) -> String {
    let mut names: Vec<(String, u64, f64)> = Vec::new();
    for inst in &plan.instances {
        let name = format!("{}{}", inst.kernel.name, inst.shape);
        match names.iter_mut().find(|n| n.0 == name) {
            Some(n) => {
                n.1 += 1;
                n.2 += inst.kernel.gpu_us * 1000.0;
            }
            None => names.push((name, 1, inst.kernel.gpu_us * 1000.0)),
        }
    }
    names.sort_by(|a, b| b.2.total_cmp(&a.2));
    let total: f64 = names.iter().map(|n| n.2).sum();
    let width = names.iter().map(|n| n.0.len()).max().unwrap_or(6).max(6);
    let mut s = String::from("\n=== Device Timing Summary ===\n\n");
    s.push_str(&format!(
        "{:>41}{:>21}\n",
        "Total Execution Time (ns):",
        (total * 40.0) as u64
    ));
    s.push_str(&format!(
        "{:>41}{:>21}\n",
        "Total Device Time for L0 backend (ns):", total as u64
    ));
    s.push_str("\n== L0 Backend ==\n\n");
    s.push_str(&format!(
        "{:>width$}, {:>11}, {:>19}, {:>8}, {:>19}, {:>19}, {:>19}\n",
        "Kernel", "Calls", "Time (ns)", "Time (%)", "Average (ns)", "Min (ns)", "Max (ns)"
    ));
    for (name, calls, t) in &names {
        let avg = (*t / *calls as f64) as u64;
        s.push_str(&format!(
            "{name:>width$}, {calls:>11}, {:>19}, {:>8.2}, {avg:>19}, {:>19}, {:>19}\n",
            *t as u64,
            (*t / total * 100.0) as f32,
            avg * 97 / 100,
            avg * 103 / 100
        ));
    }
    s.push_str("\n\n=== Kernel Properties ===\n\n");
    s.push_str(&format!("{:>width$}, Number of Arguments, SLM Per Work Group, Private Memory Per Thread, Spill Memory Per Thread\n", "Kernel"));
    for (i, (name, _, _)) in names.iter().enumerate() {
        s.push_str(&format!(
            "{name:>width$}, {:>19} {:>18} {:>25} {:>23}\n",
            3 + i * 2,
            if i % 2 == 1 { 65536 } else { 0 },
            0,
            0
        ));
    }
    s
}
