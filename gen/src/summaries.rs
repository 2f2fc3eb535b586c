//! `unitrace-gen summaries`: a tarball of per-rank text summaries
//! (docs/formats.md#summary-tarball) as `mpirun ... unitrace -h -d -r -o
//! output.txt app` leaves them (`output.<pid>.<rank>.txt`, packed like
//! `tar czf run.tgz output.*`), or as a `--result-dir` tree. Each log holds,
//! in the writer's order (docs/formats.md#summary-text-order): optional
//! `-t` timeline lines, the API timing summary (Level Zero, OpenCL CPU and
//! GPU backends), the device timing summary and kernel properties, an
//! optional `-s` submission summary, the CCL summary (once or twice).
//!
//! The workload: an LLM inference step repeated `--steps` times; its kernels
//! cover every category of `schemas/LLaMA.json` and names no rule matches.
//! One straggler rank computes about 1.45x slower while the others wait
//! about 1.35x longer in all-reduce; rank 0 runs two kernels the others do
//! not, and a few rare kernels are missing on some ranks.

use std::path::PathBuf;

use anyhow::{Context, Result};
use flate2::{Compression, GzBuilder};
use unitrace_core::atomic::AtomicFile;

use crate::rng::Draw;
use crate::units;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CclSummary {
    None,
    Once,
    /// Written twice back to back (unitrace since 2026-06).
    Twice,
}

#[derive(Debug, clap::Args)]
pub struct SummariesArgs {
    /// The tarball to write (gzip).
    pub out: PathBuf,
    #[arg(long, default_value_t = 8)]
    pub ranks: u32,
    /// Device-table rows per rank.
    #[arg(long, default_value_t = 60)]
    pub kernels: u32,
    /// Iterations of the workload (scales calls and times).
    #[arg(long, default_value_t = 2000)]
    pub steps: u32,
    /// Total uncompressed bytes (about): adds kernel rows, or timeline lines
    /// with --timeline.
    #[arg(long, value_parser = units::parse_size)]
    pub size: Option<u64>,
    /// The slow rank, or `none` (default: ranks/2).
    #[arg(long, allow_hyphen_values = true)]
    pub straggler: Option<String>,
    /// `-t` device timeline lines before the summaries.
    #[arg(long)]
    pub timeline: bool,
    #[arg(long, default_value_t = 200)]
    pub timeline_lines: u32,
    #[arg(long, value_enum, default_value = "once")]
    pub ccl_summary: CclSummary,
    /// No API timing summary.
    #[arg(long)]
    pub no_host: bool,
    /// No OpenCL backends in the API summary.
    #[arg(long)]
    pub no_opencl: bool,
    /// A `-s` kernel submission summary after the device summary.
    #[arg(long)]
    pub kernel_submission: bool,
    /// `-v` names: kernels with their launch shape, memory commands with bytes.
    #[arg(long)]
    pub verbose_names: bool,
    /// `--separate-tiles`: rows per tile, `Tile #t: "name"`.
    #[arg(long)]
    pub separate_tiles: bool,
    /// Unquoted names (before 2024-03).
    #[arg(long)]
    pub old_format: bool,
    /// Rank-less logs of the launcher (mpiexec/hydra): a wall-clock line only.
    #[arg(long, default_value_t = 0)]
    pub launcher_files: u32,
    #[arg(long, value_enum, default_value = "legacy")]
    pub layout: SummaryLayout,
    #[arg(long, default_value = "python")]
    pub app: String,
    #[arg(long, default_value_t = 6)]
    pub compresslevel: u32,
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SummaryLayout {
    /// `output.<pid>.<rank>.txt` members.
    Legacy,
    /// A tar of a `--result-dir` tree (docs/formats.md#result-dir-tree).
    ResultDir,
}

/// A kernel family of the workload: name, launch shapes, average device
/// time, calls per step, and its role.
struct Family {
    name: &'static str,
    shapes: &'static [&'static str],
    avg_ns: f64,
    per_step: f64,
    role: Role,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Compute,
    Comm,
    Memory,
}

const fn fam(
    name: &'static str,
    shapes: &'static [&'static str],
    avg_ns: f64,
    per_step: f64,
    role: Role,
) -> Family {
    Family {
        name,
        shapes,
        avg_ns,
        per_step,
        role,
    }
}

const S32: &str = "[SIMD32 {512; 1; 1} {256; 1; 1}]";
const S16: &str = "[SIMD16 {64; 1; 1} {512; 1; 1}]";

/// The workload's kernels: every LLaMA category (matmul, attn, norm,
/// allreduce, sync, mem_op, slice, vector, beam) and some that no rule
/// matches.
const FAMILIES: &[Family] = &[
    fam("xpu::xetla::hgemm_caller<sycl::_V1::detail::half_impl::half, 32, 64, 8, 512, 8, 4, 1, 1, 3, true>", &[S16, "[SIMD16 {512; 1; 1} {256; 1; 1}]"], 45_000.0, 4.0, Role::Compute),
    fam("xpu::xetla::hgemm_bias_res_res_caller<sycl::_V1::detail::half_impl::half, 8, 512, 8, 16, 16, 4, 1, 1, 3, true>", &[S16], 46_000.0, 1.0, Role::Compute),
    fam("gemm_kernel", &["[SIMD8 {4; 1; 1} {128; 1; 1}]"], 52_000.0, 1.0, Role::Compute),
    fam("gpu::xetla::fmha::IfmhaForwardKernel<gpu::xetla::fmha::ifmha_policy_32x512x128, sycl::_V1::detail::half_impl::half, false, true>", &["[SIMD16 {16; 4; 1} {128; 1; 1}]"], 28_000.0, 1.0, Role::Compute),
    fam("at::AtenIpexTypeXPU::RotaryEmbeddingKernel<c10::Half, 128, true>", &[S32], 6_500.0, 1.0, Role::Compute),
    fam("at::AtenIpexTypeXPU::normalization::fused_norm_kernel1<c10::Half, float, 8, true>", &["[SIMD32 {16; 1; 1} {1024; 1; 1}]", "[SIMD32 {32; 1; 1} {1024; 1; 1}]"], 7_500.0, 2.0, Role::Compute),
    fam("Allreduce_small_kernel<sycl::_V1::detail::half_impl::half, 8>", &["[SIMD16 {1; 1; 1} {256; 1; 1}]"], 24_000.0, 2.0, Role::Comm),
    fam("NoCopyKernel_compute<sycl::_V1::detail::half_impl::half, 12>", &["[SIMD16 {1024; 8; 1} {64; 1; 1}]"], 31_000.0, 0.5, Role::Comm),
    fam("AllreduceMediumKernel_GlobalSync<sycl::_V1::detail::half_impl::half>", &["[SIMD16 {1; 1; 1} {16; 1; 1}]"], 3_200.0, 0.5, Role::Comm),
    fam("zeCommandListAppendBarrier", &[""], 1_800.0, 1.0, Role::Comm),
    fam("zeCommandListAppendMemoryCopy(D2M)", &["[4]"], 9_300.0, 1.0, Role::Memory),
    fam("zeCommandListAppendMemoryCopy(M2D)", &["[4194304]"], 210_000.0, 0.05, Role::Memory),
    fam("zeCommandListAppendMemoryFill(D)", &["[1048576]"], 2_600.0, 0.2, Role::Memory),
    fam("at::AtenIpexTypeXPU::VectorizedElementwiseKernelFunctor<at::AtenIpexTypeXPU::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::impl::AddKernel<c10::Half> >, 4, at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, unsigned int> >", &[S32], 3_900.0, 2.0, Role::Compute),
    fam("at::AtenIpexTypeXPU::VectorizedElementwiseKernelFunctor<at::AtenIpexTypeXPU::cos_kernel_dpcpp_functor<float>, 4, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int> >", &[S32], 2_700.0, 1.0, Role::Compute),
    fam("at::AtenIpexTypeXPU::impl::BeamSearchStep<c10::Half, 4>", &[S16], 11_000.0, 1.0, Role::Compute),
    fam("at::AtenIpexTypeXPU::impl::ArgMaxKernel<c10::Half, long>", &[S32], 2_200.0, 1.0, Role::Compute),
    fam("at::AtenIpexTypeXPU::UnrolledElementwiseKernelFunctor<4, at::impl::direct_copy_kernel_gpu_functor<c10::Half>, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int> >", &[S32], 8_400.0, 1.0, Role::Compute),
    fam("triton_poi_fused_add_mul_0", &["[SIMD32 {1024; 1; 1} {128; 1; 1}]"], 3_100.0, 1.0, Role::Compute),
    fam("`anonymous namespace'::reduce_rows<float>", &["[SIMD16 {28; 28; 8} {16; 1; 1}]"], 5_800.0, 0.5, Role::Compute),
];

/// API calls of the Level Zero backend: name, calls per step (plus a fixed
/// set-up count), average ns.
const API_L0: &[(&str, f64, u64, f64)] = &[
    ("zeModuleCreate", 0.0, 11, 18_800_000.0),
    ("zeMemAllocDevice", 1.2, 25, 32_700.0),
    ("zeMemFree", 1.2, 0, 9_700.0),
    ("zeCommandListHostSynchronize", 0.01, 0, 425_000.0),
    ("zeEventHostSynchronize", 0.015, 0, 183_000.0),
    ("zeCommandListCreateImmediate", 0.0, 6, 406_000.0),
    ("zeKernelCreate", 0.0, 195, 10_300.0),
    ("zeCommandListAppendLaunchKernel", 17.0, 0, 5_700.0),
    ("zeCommandListAppendMemoryCopy", 1.05, 0, 6_700.0),
    ("zeKernelSetArgumentValue", 102.0, 0, 92.0),
    ("zeCommandListAppendBarrier", 1.0, 0, 1_600.0),
    ("zeEventQueryStatus", 0.14, 0, 86.0),
    ("zeKernelSetGroupSize", 17.0, 0, 116.0),
    ("zeContextCreate", 0.0, 1, 1_330.0),
    ("zeDriverGet", 0.0, 3, 1_600.0),
    ("zeDeviceGet", 0.0, 2, 341.0),
];

const API_CL: &[(&str, u64, f64)] = &[
    ("clGetDeviceInfo", 105, 244.0),
    ("clGetPlatformInfo", 24, 608.0),
    ("clGetDeviceIDs", 9, 536.0),
    ("clReleaseDevice", 12, 163.0),
];

const CCL: &[(&str, f64, f64)] = &[
    ("oneCCL::API::ALLREDUCE_SMALL", 2.0, 81_000.0),
    ("oneCCL::API::ALLREDUCE_MEDIUM", 0.25, 305_000.0),
    ("oneCCL::API::ALLREDUCE_LARGE", 0.02, 1_900_000.0),
    ("oneCCL::API::SYNC", 0.5, 28_000.0),
    ("oneCCL::API::BARRIER", 0.05, 41_000.0),
    ("oneCCL::API::ALLGATHERV", 0.05, 140_000.0),
    ("oneCCL::API::BROADCAST", 0.01, 22_000.0),
];

const TAG_RANK: u64 = 40;

/// One table row: name, calls, total ns, min, max.
struct Row {
    name: String,
    calls: u64,
    total: u64,
    min: u64,
    max: u64,
}

impl Row {
    fn new(name: String, calls: u64, avg_ns: f64, d: &mut Draw) -> Row {
        let calls = calls.max(1);
        let avg = avg_ns * d.jitter(0.08);
        let total = (avg * calls as f64).round().max(1.0) as u64;
        let mean = total / calls;
        let min = if calls == 1 {
            mean
        } else {
            (mean as f64 * d.uniform(0.6, 0.95)) as u64
        };
        let max = if calls == 1 {
            mean
        } else {
            (mean as f64 * d.uniform(1.05, 1.9)) as u64
        };
        Row {
            name,
            calls,
            total,
            min,
            max,
        }
    }
}

pub fn run(args: &SummariesArgs, seed: u64) -> Result<()> {
    let straggler = match &args.straggler {
        Some(s) => units::parse_straggler(s).map_err(anyhow::Error::msg)?,
        None => Some(args.ranks / 2),
    };
    let mut kernels = args.kernels.max(1);
    let mut timeline_lines = args.timeline_lines;
    if let Some(size) = args.size {
        // Measure one rank's log and scale the rows (or timeline lines).
        let probe = rank_log(args, seed, 0, straggler, kernels, timeline_lines);
        let per_rank = size as f64 / args.ranks.max(1) as f64;
        if args.timeline {
            let line = 160.0;
            let extra = ((per_rank - probe.len() as f64) / line).max(0.0);
            timeline_lines += extra as u32;
        } else {
            let per_row = 700.0; // a row in each table that lists kernels
            let extra = ((per_rank - probe.len() as f64) / per_row).max(0.0);
            kernels += extra as u32;
        }
    }
    let file = AtomicFile::create(&args.out)
        .with_context(|| format!("{}: cannot create", args.out.display()))?;
    let gz = GzBuilder::new()
        .mtime(0)
        .write(file, Compression::new(args.compresslevel.min(9)));
    let mut tar = tar::Builder::new(gz);
    tar.mode(tar::HeaderMode::Deterministic);
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    for rank in 0..args.ranks {
        let log = rank_log(args, seed, rank, straggler, kernels, timeline_lines);
        members.extend(member_files(args, rank, log));
    }
    for l in 0..args.launcher_files {
        let pid = 99_000 + l * 3;
        let wall = 9_100_000_000u64 + l as u64 * 1_234_567;
        let text = format!(
            "\n=== Device Timing Summary ===\n\n{:>41}{:>21}\n",
            "Total Execution Time (ns):", wall
        );
        let name = match args.layout {
            SummaryLayout::Legacy => format!("output.{pid}.txt"),
            SummaryLayout::ResultDir => format!("unitrace.{pid}/device_timing.txt"),
        };
        members.push((name, text.into_bytes()));
    }
    members.sort_by(|a, b| a.0.cmp(&b.0));
    let mut total = 0u64;
    for (name, data) in &members {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(1_730_000_000);
        h.set_cksum();
        tar.append_data(&mut h, name, data.as_slice())?;
        total += data.len() as u64;
    }
    let gz = tar.into_inner()?;
    let file = gz.finish()?;
    file.commit()
        .with_context(|| format!("{}: cannot write", args.out.display()))?;
    if !args.quiet {
        eprintln!(
            "unitrace-gen: {} ({} members, {:.1} MB of logs)",
            args.out.display(),
            members.len(),
            total as f64 / 1e6
        );
    }
    Ok(())
}

fn pid_of(rank: u32) -> u32 {
    100_020 + rank * 23 + (rank * 5) % 17
}

/// The tar members of one rank: one log, or a result-dir folder of reports.
fn member_files(args: &SummariesArgs, rank: u32, log: RankLog) -> Vec<(String, Vec<u8>)> {
    let pid = pid_of(rank);
    match args.layout {
        SummaryLayout::Legacy => vec![(
            format!("output.{pid}.{rank}.txt"),
            log.joined().into_bytes(),
        )],
        SummaryLayout::ResultDir => {
            let dir = format!("rank_{rank}.{}.{pid}", args.app);
            let mut v = Vec::new();
            let mut push = |file: &str, text: &str| {
                if !text.is_empty() {
                    v.push((format!("{dir}/{file}"), text.as_bytes().to_vec()));
                }
            };
            push("device_timeline.txt", &log.timeline);
            push("host_timing.txt", &log.api);
            push("device_timing.txt", &log.device);
            push("device_submission.txt", &log.submission);
            push("ccl_summary_report.txt", &log.ccl);
            let config = format!(
                "{{ \"unitrace version\": \"2.1.3 (fcd0ca8)\",\n  \"app\": \"{}\",\n  \"unitrace_args\": [\"-h\", \"-d\", \"-r\", \"--result-dir\", \"results\"],\n  \"app_args\": [],\n  \"Host\": \"x1000c0s0b0n0\",\n  \"pid\": \"{}\"\n}}\n",
                args.app,
                pid - 2
            );
            v.push((
                format!("rank_{rank}.unitrace.{}/run_config.json", pid - 2),
                config.into_bytes(),
            ));
            v
        }
    }
}

/// The reports of one rank, each a text block.
struct RankLog {
    timeline: String,
    api: String,
    device: String,
    submission: String,
    ccl: String,
}

impl RankLog {
    fn joined(&self) -> String {
        [
            &self.timeline,
            &self.api,
            &self.device,
            &self.submission,
            &self.ccl,
        ]
        .iter()
        .map(|s| s.as_str())
        .collect()
    }

    fn len(&self) -> usize {
        self.timeline.len()
            + self.api.len()
            + self.device.len()
            + self.submission.len()
            + self.ccl.len()
    }
}

fn rank_log(
    args: &SummariesArgs,
    seed: u64,
    rank: u32,
    straggler: Option<u32>,
    kernels: u32,
    timeline_lines: u32,
) -> RankLog {
    let mut d = Draw::new(seed, &[TAG_RANK, rank as u64]);
    let steps = args.steps.max(1) as f64;
    let slow = straggler == Some(rank);
    let comm_factor = if straggler.is_some() && !slow {
        1.35
    } else {
        1.0
    };
    let compute_factor = if slow { 1.45 } else { 1.0 };
    // Set-up (module builds, allocations) then the steps.
    let wall = ((400_000_000.0 + steps * 4_340_000.0) * d.jitter(0.004)) as u64;

    let mut rows: Vec<Row> = Vec::new();
    let extra = if rank == 0 { 2 } else { 0 };
    for k in 0..(kernels + extra) as usize {
        let f = &FAMILIES[k % FAMILIES.len()];
        let variant = k / FAMILIES.len();
        // A few rare kernels run on some ranks only.
        if k >= FAMILIES.len() && k % 7 == 3 && (rank + k as u32).is_multiple_of(3) {
            continue;
        }
        if k >= kernels as usize && rank != 0 {
            continue;
        }
        let shape = f.shapes[variant % f.shapes.len()];
        let factor = match f.role {
            Role::Compute => compute_factor,
            Role::Comm => comm_factor,
            Role::Memory => 1.0,
        };
        let calls = (steps * f.per_step * d.jitter(0.02)).round() as u64 + 1;
        rows.push(Row::new(
            kernel_name(args, f.name, shape, variant),
            calls,
            f.avg_ns * factor,
            &mut d,
        ));
    }
    rows.sort_by(|a, b| b.total.cmp(&a.total).then(a.name.cmp(&b.name)));
    let device_total: u64 = rows.iter().map(|r| r.total).sum();

    let timeline = if args.timeline {
        timeline(args, rank, &rows, timeline_lines, &mut d)
    } else {
        String::new()
    };
    let api = if args.no_host {
        String::new()
    } else {
        api_summary(args, steps, wall, &mut d)
    };
    let mut device = device_summary(args, wall, device_total, &rows);
    device.push_str(&kernel_properties(args, &rows));
    let submission = if args.kernel_submission {
        submission_summary(wall, device_total, &rows, &mut d)
    } else {
        String::new()
    };
    let ccl = match args.ccl_summary {
        CclSummary::None => String::new(),
        CclSummary::Once => format!("\n{}", ccl_block(rank, steps, comm_factor, &mut d)),
        CclSummary::Twice => {
            let block = ccl_block(rank, steps, comm_factor, &mut d);
            format!("\n{block}{block}")
        }
    };
    RankLog {
        timeline,
        api,
        device,
        submission,
        ccl,
    }
}

/// A kernel's name in a device table: quoted (unless old format), with its
/// shape under `-v`.
fn kernel_name(args: &SummariesArgs, name: &str, shape: &str, _variant: usize) -> String {
    let full = if args.verbose_names {
        format!("{name}{shape}")
    } else {
        name.to_string()
    };
    if args.old_format {
        full
    } else {
        format!("\"{full}\"")
    }
}

/// unitrace's percentages are float32 divisions.
fn percent(part: u64, total: u64) -> f32 {
    if total == 0 {
        0.0
    } else {
        (part as f32 / total as f32) * 100.0f32
    }
}

/// A padded table: the first column right-aligned to the longest name, the
/// others to their widths.
fn table(out: &mut String, header: &[&str], widths: &[usize], rows: &[Vec<String>]) {
    let first = rows
        .iter()
        .map(|r| r[0].len())
        .max()
        .unwrap_or(0)
        .max(header[0].len());
    let line = |out: &mut String, fields: &[&str]| {
        for (i, f) in fields.iter().enumerate() {
            if i == 0 {
                out.push_str(&format!("{f:>first$}"));
            } else {
                out.push_str(&format!(", {f:>w$}", w = widths[i]));
            }
        }
        out.push('\n');
    };
    line(out, header);
    for r in rows {
        let fields: Vec<&str> = r.iter().map(|s| s.as_str()).collect();
        line(out, &fields);
    }
}

fn time_rows(rows: &[Row], total: u64, decimals: usize) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| {
            vec![
                r.name.clone(),
                r.calls.to_string(),
                r.total.to_string(),
                format!("{:.*}", decimals, percent(r.total, total)),
                (r.total / r.calls).to_string(),
                r.min.to_string(),
                r.max.to_string(),
            ]
        })
        .collect()
}

const TIME_HEADER: [&str; 7] = [
    "Function",
    "Calls",
    "Time (ns)",
    "Time (%)",
    "Average (ns)",
    "Min (ns)",
    "Max (ns)",
];

fn api_summary(args: &SummariesArgs, steps: f64, wall: u64, d: &mut Draw) -> String {
    let mut l0: Vec<Row> = API_L0
        .iter()
        .map(|&(name, per_step, fixed, avg)| {
            let calls = (per_step * steps).round() as u64 + fixed;
            Row::new(name.to_string(), calls, avg, d)
        })
        .collect();
    l0.sort_by(|a, b| b.total.cmp(&a.total).then(a.name.cmp(&b.name)));
    let l0_total: u64 = l0.iter().map(|r| r.total).sum();
    let cl = |d: &mut Draw, scale: f64| {
        let mut v: Vec<Row> = API_CL
            .iter()
            .map(|&(n, c, avg)| Row::new(n.to_string(), c, avg * scale, d))
            .collect();
        v.sort_by(|a, b| b.total.cmp(&a.total).then(a.name.cmp(&b.name)));
        v
    };
    let (cpu, gpu) = if args.no_opencl {
        (Vec::new(), Vec::new())
    } else {
        (cl(d, 1.0), cl(d, 0.3))
    };
    let sum = |v: &[Row]| v.iter().map(|r| r.total).sum::<u64>();
    let mut s = String::from("\n=== API Timing Summary ===\n\n");
    let mut titles = vec![
        ("Total Execution Time (ns):", wall),
        ("Total API Time for L0 backend (ns):", l0_total),
    ];
    if !cpu.is_empty() {
        titles.push(("Total API Time for CL CPU backend (ns):", sum(&cpu)));
        titles.push(("Total API Time for CL GPU backend (ns):", sum(&gpu)));
    }
    let label = titles.iter().map(|t| t.0.len()).max().unwrap_or(0);
    for (t, v) in &titles {
        s.push_str(&format!("{t:>label$}{v:>21}\n"));
    }
    s.push_str("\n== L0 Backend ==\n\n");
    table(
        &mut s,
        &TIME_HEADER,
        &[0, 12, 20, 13, 20, 20, 20],
        &time_rows(&l0, l0_total, 6),
    );
    for (title, rows) in [("CL CPU", &cpu), ("CL GPU", &gpu)] {
        if rows.is_empty() {
            continue;
        }
        s.push_str(&format!("\n== {title} Backend ==\n\n"));
        table(
            &mut s,
            &TIME_HEADER,
            &[0, 11, 19, 11, 19, 19, 19],
            &time_rows(rows, sum(rows), 2),
        );
    }
    s.push('\n');
    s
}

fn device_summary(args: &SummariesArgs, wall: u64, device_total: u64, rows: &[Row]) -> String {
    let mut s = String::from("\n=== Device Timing Summary ===\n\n");
    s.push_str(&format!(
        "{:>41}{:>21}\n",
        "Total Execution Time (ns):", wall
    ));
    s.push_str(&format!(
        "{:>41}{:>21}\n",
        "Total Device Time for L0 backend (ns):", device_total
    ));
    s.push_str("\n== L0 Backend ==\n\n");
    let mut header = TIME_HEADER;
    header[0] = "Kernel";
    let mut table_rows = time_rows(rows, device_total, 6);
    if args.separate_tiles {
        // Each row split over two tiles.
        table_rows = table_rows
            .into_iter()
            .flat_map(|r| {
                (0..2).map(move |t| {
                    let mut r = r.clone();
                    r[0] = format!("Tile #{t}: {}", r[0]);
                    r
                })
            })
            .collect();
    }
    table(&mut s, &header, &[0, 12, 20, 12, 20, 20, 20], &table_rows);
    s
}

fn kernel_properties(args: &SummariesArgs, rows: &[Row]) -> String {
    let mut s = String::from("\n\n=== Kernel Properties ===\n\n");
    let header = [
        "Kernel",
        "Compiled",
        "SIMD",
        "Number of Arguments",
        "SLM Per Work Group",
        "Private Memory Per Thread",
        "Spill Memory Per Thread",
    ];
    let props: Vec<Vec<String>> = rows
        .iter()
        .filter(|r| !r.name.contains("zeCommandList"))
        .enumerate()
        .map(|(i, r)| {
            vec![
                r.name.clone(),
                if i % 3 == 0 { "AOT" } else { "JIT" }.to_string(),
                if i % 2 == 0 { "16" } else { "32" }.to_string(),
                (5 + i % 13).to_string(),
                if i % 4 == 1 { "65536" } else { "0" }.to_string(),
                "0".to_string(),
                "0".to_string(),
            ]
        })
        .collect();
    let _ = args;
    table(&mut s, &header, &[0, 8, 4, 19, 18, 25, 23], &props);
    s.push('\n');
    s
}

fn submission_summary(wall: u64, device_total: u64, rows: &[Row], d: &mut Draw) -> String {
    let mut s = String::from("\n=== Kernel Submission Summary ===\n\n");
    s.push_str(&format!(
        "{:>41}{:>21}\n",
        "Total Execution Time (ns):", wall
    ));
    s.push_str(&format!(
        "{:>41}{:>21}\n",
        "Total Device Time for L0 backend (ns):", device_total
    ));
    s.push_str("\n== L0 Backend ==\n\n");
    let header = [
        "Kernel",
        "Calls",
        "Append (ns)",
        "Append (%)",
        "Submit (ns)",
        "Submit (%)",
        "Execute (ns)",
        "Execute (%)",
    ];
    let append: Vec<u64> = rows
        .iter()
        .map(|r| (r.calls as f64 * 5_600.0 * d.jitter(0.1)) as u64)
        .collect();
    let submit: Vec<u64> = rows
        .iter()
        .map(|r| (r.calls as f64 * 21_000.0 * d.jitter(0.1)) as u64)
        .collect();
    let (ta, ts) = (append.iter().sum::<u64>(), submit.iter().sum::<u64>());
    let table_rows: Vec<Vec<String>> = rows
        .iter()
        .zip(append.iter().zip(&submit))
        .map(|(r, (a, sb))| {
            vec![
                r.name.clone(),
                r.calls.to_string(),
                a.to_string(),
                format!("{:.2}", percent(*a, ta)),
                sb.to_string(),
                format!("{:.2}", percent(*sb, ts)),
                r.total.to_string(),
                format!("{:.2}", percent(r.total, device_total)),
            ]
        })
        .collect();
    table(
        &mut s,
        &header,
        &[0, 12, 20, 11, 20, 11, 20, 12],
        &table_rows,
    );
    s
}

/// The `-r` block: banner, header, rows, no empty line after the last row
/// (docs/formats.md#summary-text-ccl).
fn ccl_block(rank: u32, steps: f64, comm_factor: f64, d: &mut Draw) -> String {
    let stars = "*".repeat(60);
    let mut s = format!(
        "{stars}\n*  Process ID : {} | Rank ID : {rank}\n{stars}\n",
        pid_of(rank)
    );
    let mut rows: Vec<Row> = CCL
        .iter()
        .map(|&(name, per_step, avg)| {
            Row::new(
                name.to_string(),
                (per_step * steps).round() as u64,
                avg * comm_factor,
                d,
            )
        })
        .collect();
    rows.sort_by(|a, b| b.total.cmp(&a.total).then(a.name.cmp(&b.name)));
    let total: u64 = rows.iter().map(|r| r.total).sum();
    table(
        &mut s,
        &TIME_HEADER,
        &[0, 12, 20, 12, 20, 20, 20],
        &time_rows(&rows, total, 6),
    );
    s
}

/// `-t` lines: one per finished device command (docs/formats.md#summary-text-timeline).
fn timeline(args: &SummariesArgs, rank: u32, rows: &[Row], lines: u32, d: &mut Draw) -> String {
    let mut s = String::new();
    let mut t = 1_733_400_000_000_000_000u64 + rank as u64 * 1_000_000;
    let tid = pid_of(rank);
    for i in 0..lines as usize {
        let r = &rows[i % rows.len()];
        let name = r.name.trim_matches('"');
        let name = if args.verbose_names {
            name.to_string()
        } else {
            format!("{name}[SIMD32 {{64; 1; 1}} {{256; 1; 1}}]")
        };
        let append = t;
        let submit = append + d.between(2_000, 9_000);
        let start = submit + d.between(5_000, 40_000);
        let end = start + r.total / r.calls;
        s.push_str(&format!(
            "Thread {tid} Device 0 : \"{name}\" [ns] {append} (append) {submit} (submit) {start} (start) {end} (end)\n"
        ));
        t = end + d.between(1_000, 20_000);
    }
    s
}
