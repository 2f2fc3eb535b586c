//! `unitrace-gen metrics`: hardware-metric CSVs as `unitrace -k`
//! (sampling) and `-q` (query) write them (docs/formats.md#metric-csv),
//! with the variants older and current unitrace versions wrote
//! (docs/formats.md#metric-csv-variants): trailing separators, unquoted
//! right-aligned names, `%g` floats, rows with an empty kernel field, idle
//! sampling, a kernel relaunched with another shape, a last instance
//! without its empty line, files without device banner, and the
//! report-validity columns of current query files with flagged reports
//! (docs/formats.md#metric-csv-validity).
//!
//! [`MetricWriter`] is shared with `roofline`, whose profiles are query
//! files of two metric groups.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use unitrace_core::atomic::AtomicFile;

use crate::kernels::{self, MetricKernel};

use crate::rng::Draw;
use crate::units;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// `unitrace -k`: one row per hardware sample inside a kernel.
    Sampling,
    /// `unitrace -q`: one row per kernel instance.
    Query,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Family {
    /// Data Center GPU Max (Xe-HPC) metric names.
    Pvc,
    /// Arc B-series (Xe2) metric names.
    Bmg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FloatStyle {
    /// Six decimals of the float32 value (`89.460007`), since 2024-02.
    Fixed,
    /// C++ stream form, six significant digits (`89.46`, `4.00791e-06`).
    General,
}

#[derive(Debug, clap::Args)]
pub struct MetricsArgs {
    /// The CSV file to write.
    pub out: PathBuf,
    #[arg(long, value_enum, default_value = "sampling")]
    pub mode: Mode,
    /// Metric names of this GPU family (default: pvc; bmg with --validity-columns).
    #[arg(long, value_enum)]
    pub device_family: Option<Family>,
    /// Device sections.
    #[arg(long, default_value_t = 1)]
    pub devices: u32,
    /// Distinct kernels.
    #[arg(long, default_value_t = 8)]
    pub kernels: u32,
    /// Instances of each kernel.
    #[arg(long, default_value_t = 3)]
    pub instances: u32,
    /// Sampling rows per instance.
    #[arg(long, default_value_t = 6)]
    pub samples: u32,
    /// Add instances until the file (each device: its share) is this big.
    #[arg(long, value_parser = units::parse_size)]
    pub size: Option<u64>,
    /// Sampling period (the `GpuTime[ns]` of a sampling row).
    #[arg(long, default_value_t = 50.0)]
    pub interval_us: f64,
    /// Unquoted, right-aligned kernel names, `%g` floats and trailing
    /// separators (before 2024-03); names with commas are left out.
    #[arg(long)]
    pub unquoted_padded_names: bool,
    /// Every header and row ends with the separator (before 2024-12).
    #[arg(long)]
    pub trailing_comma: bool,
    #[arg(long, value_enum, default_value = "fixed")]
    pub float_style: FloatStyle,
    /// Rows with an empty kernel field and zero values.
    #[arg(long, default_value_t = 0)]
    pub empty_kernel_rows: u32,
    /// `NoKernel(Before <next kernel>)` rows between instances.
    #[arg(long)]
    pub idle_sampling: bool,
    /// The first kernel launched once more with another global size.
    #[arg(long)]
    pub reshape: bool,
    /// No empty line after a section's last instance.
    #[arg(long)]
    pub truncated_last_instance: bool,
    /// No `=== Device #N Metrics ===` banner (a `--result-dir` file).
    #[arg(long)]
    pub no_device_banner: bool,
    /// Query files: some reports flagged in the validity columns (invalid
    /// or doubtful); implies `--mode query`.
    #[arg(long)]
    pub validity_columns: bool,
    #[arg(short, long)]
    pub quiet: bool,
}

/// The ComputeBasic group of PVC, in unitrace's column order.
pub const PVC_COMPUTE_BASIC: &[&str] = &[
    "GpuTime[ns]",
    "GpuCoreClocks[cycles]",
    "AvgGpuCoreFrequencyMHz[MHz]",
    "GpuSliceClocksCount[events]",
    "AvgGpuSliceFrequencyMHz[MHz]",
    "L3_BYTE_READ[bytes]",
    "L3_BYTE_WRITE[bytes]",
    "GPU_MEMORY_BYTE_READ[bytes]",
    "GPU_MEMORY_BYTE_WRITE[bytes]",
    "XVE_ACTIVE[%]",
    "XVE_STALL[%]",
    "XVE_BUSY[events]",
    "XVE_THREADS_OCCUPANCY_ALL[%]",
    "XVE_COMPUTE_THREAD_COUNT[threads]",
    "XVE_ATOMIC_ACCESS_COUNT[messages]",
    "XVE_BARRIER_MESSAGE_COUNT[messages]",
    "XVE_INST_EXECUTED_ALU0_ALL[events]",
    "XVE_INST_EXECUTED_ALU1_ALL[events]",
    "XVE_INST_EXECUTED_XMX_ALL[events]",
    "XVE_INST_EXECUTED_SEND_ALL[events]",
    "XVE_INST_EXECUTED_CONTROL_ALL[events]",
    "XVE_PIPE_ALU0_AND_ALU1_ACTIVE[%]",
    "XVE_PIPE_ALU0_AND_XMX_ACTIVE[%]",
    "XVE_INST_EXECUTED_ALU0_ALL_UTILIZATION[%]",
    "XVE_INST_EXECUTED_ALU1_ALL_UTILIZATION[%]",
    "XVE_INST_EXECUTED_SEND_ALL_UTILIZATION[%]",
    "XVE_INST_EXECUTED_CONTROL_ALL_UTILIZATION[%]",
    "XVE_INST_EXECUTED_XMX_ALL_UTILIZATION[%]",
];

/// The ComputeBasic group of BMG (Xe2).
pub const BMG_COMPUTE_BASIC: &[&str] = &[
    "GpuTime[ns]",
    "GpuCoreClocks[cycles]",
    "AvgGpuCoreFrequencyMHz[MHz]",
    "ResultUncertainty[%]",
    "GPU_BUSY[%]",
    "IA_VERTEX[events]",
    "GPGPU_THREADGROUP_COUNT[events]",
    "ASYNC_GPGPU_THREADGROUP_COUNT[events]",
    "RASTERIZER_SAMPLE_OUTPUT[events]",
    "ICACHE_HIT[events]",
    "ICACHE_MISS[events]",
    "XVE_ACTIVE[%]",
    "XVE_INST_EXECUTED_ALU0_ALL[events]",
    "XVE_INST_EXECUTED_ALU1_ALL[events]",
    "XVE_INST_EXECUTED_SEND_ALL[events]",
    "XVE_INST_ISSUED_ALL[events]",
    "XVE_SHARED_FUNCTION_ACCESS_HOLD[%]",
    "XVE_STALL[%]",
    "XVE_THREADS_OCCUPANCY_ALL[%]",
    "XVE_INST_EXECUTED_ALU2_ALL[events]",
    "XVE_MULTIPLE_PIPE_ACTIVE[%]",
    "LOAD_STORE_CACHE_PARTIAL_WRITE_COUNT[events]",
    "SLM_BANK_CONFLICT_COUNT[events]",
    "SLM_BYTE_READ[bytes]",
    "SLM_BYTE_WRITE[bytes]",
    "LOAD_STORE_CACHE_BYTE_READ[bytes]",
    "LOAD_STORE_CACHE_BYTE_WRITE[bytes]",
    "LOAD_STORE_CACHE_ACCESS[events]",
    "LOAD_STORE_CACHE_HIT[events]",
    "L3_ATOMIC_ACCESS[events]",
    "L3_HIT[events]",
    "L3_MISS[events]",
    "L3_READ[events]",
    "L3_WRITE[events]",
    "L3_STALL[%]",
    "COMPRESSOR_INPUT[events]",
    "COMPRESSOR_OUTPUT[events]",
    "GPU_MEMORY_BYTE_READ[bytes]",
    "GPU_MEMORY_BYTE_WRITE[bytes]",
    "GPU_MEMORY_BYTE_READ_RATE[GBpS]",
    "GPU_MEMORY_BYTE_WRITE_RATE[GBpS]",
    "GPU_MEMORY_L3_READ[events]",
    "GPU_MEMORY_L3_WRITE[events]",
    "GPU_MEMORY_REQUEST_QUEUE_FULL[%]",
    "TLB_MISS[events]",
    "ASYNC_GPGPU_THREAD_EXIT_COUNT[messages]",
    "GPGPU_DISPATCH[%]",
    "COMMAND_PARSER_COMPUTE_ENGINE_BUSY[%]",
    "COMMAND_PARSER_COMPUTE_ENGINE_DISPATCH_KERNEL_COUNT[events]",
    "COMMAND_PARSER_COPY_ENGINE_BUSY[%]",
    "COMMAND_PARSER_FLUSH_COUNT[events]",
    "COMMAND_PARSER_RENDER_ENGINE_BUSY[%]",
    "COMMAND_PARSER_RENDER_ENGINE_DISPATCH_KERNEL_COUNT[events]",
    "XVE_PIPE_ALU0_AND_ALU1_ACTIVE[%]",
    "XVE_PIPE_ALU0_AND_ALU2_ACTIVE[%]",
    "XVE_INST_EXECUTED_ALU0_ALL_UTILIZATION[%]",
    "XVE_INST_EXECUTED_ALU1_ALL_UTILIZATION[%]",
    "XVE_INST_EXECUTED_ALU2_ALL_UTILIZATION[%]",
    "HOST_TO_GPUMEM_TRANSACTION_READ[events]",
    "HOST_TO_GPUMEM_TRANSACTION_WRITE[events]",
    "SYSMEM_TRANSACTION_READ[events]",
    "SYSMEM_TRANSACTION_WRITE[events]",
];

/// The VectorEngine138 group (the compute profile of a roofline).
pub const VECTOR_ENGINE_138: &[&str] = &[
    "GpuTime[ns]",
    "GpuCoreClocks[cycles]",
    "AvgGpuCoreFrequencyMHz[MHz]",
    "GpuSliceClocksCount[events]",
    "AvgGpuSliceFrequencyMHz[MHz]",
    "XVE_INST_EXECUTED_ALU0_ALL[events]",
    "XVE_INST_EXECUTED_FP16[events]",
    "XVE_INST_EXECUTED_FP32[events]",
    "XVE_INST_EXECUTED_FP64[events]",
    "XVE_INST_EXECUTED_ALU1_ALL[events]",
    "XVE_INST_EXECUTED_INT16[events]",
    "XVE_INST_EXECUTED_INT32[events]",
    "XVE_INST_EXECUTED_MATH[events]",
    "XVE_INST_EXECUTED_ALU2_ALL[events]",
    "XVE_INST_EXECUTED_XMX_INT4[events]",
    "XVE_INST_EXECUTED_XMX_INT8[events]",
    "XVE_INST_EXECUTED_XMX_FP16[events]",
    "XVE_INST_EXECUTED_XMX_BF16[events]",
    "XVE_INST_EXECUTED_ALU0_ALL_UTILIZATION[%]",
    "XVE_INST_EXECUTED_FP16_UTILIZATION[%]",
    "XVE_INST_EXECUTED_FP32_UTILIZATION[%]",
    "XVE_INST_EXECUTED_FP64_UTILIZATION[%]",
    "XVE_INST_EXECUTED_ALU1_ALL_UTILIZATION[%]",
    "XVE_INST_EXECUTED_INT16_UTILIZATION[%]",
    "XVE_INST_EXECUTED_INT32_UTILIZATION[%]",
    "XVE_INST_EXECUTED_MATH_UTILIZATION[%]",
    "XVE_INST_EXECUTED_ALU2_ALL_UTILIZATION[%]",
    "XVE_INST_EXECUTED_XMX_INT4_UTILIZATION[%]",
    "XVE_INST_EXECUTED_XMX_INT8_UTILIZATION[%]",
    "XVE_INST_EXECUTED_XMX_FP16_UTILIZATION[%]",
    "XVE_INST_EXECUTED_XMX_BF16_UTILIZATION[%]",
];

const SAMPLING_TAIL: &[&str] = &[
    "QueryBeginTime[ns]",
    "CoreFrequencyMHz[MHz]",
    "XveSliceFrequencyMHz[MHz]",
    "ReportReason",
    "ContextIdValid",
    "ContextId",
    "SourceId",
    "StreamMarker",
];

/// The report-status columns of query files, in order
/// (docs/formats.md#metric-csv-validity); BMG adds the last one.
pub const VALIDITY: &[&str] = &[
    "CoreFrequencyChanged",
    "QuerySplitOccurred",
    "ReportId",
    "ReportsCount",
    "OverrunOccured",
    "MidQueryTimer",
    "MidQueryProgramming",
    "MidQueryMarker",
    "MidQueryCtxSwitch",
    "MidQueryC6",
    "MidQueryFreqChange",
    "MidQueryMmioTrigger",
    "ReportError",
    "ReportLost",
    "ReportInconsistent",
    "ReportCtxSwitchLost",
    "ReportWithoutWorkload",
    "ReportContextMismatch",
    "ReportQueryModeMismatch",
];

/// How the text of a file is spelled (the variants of
/// docs/formats.md#metric-csv-variants).
#[derive(Debug, Clone, Copy)]
pub struct Spelling {
    pub mode: Mode,
    pub unquoted_padded: bool,
    pub trailing_separator: bool,
    pub floats: FloatStyle,
    pub banner: bool,
    pub last_instance_blank: bool,
    /// V0 query logs: a header line before every instance, `Device` in
    /// place of `GlobalInstanceId` (roofline's `--format old`).
    pub header_per_instance: bool,
}

/// One kernel instance of a file.
#[derive(Debug, Clone, Copy)]
pub struct Instance {
    pub kernel: MetricKernel,
    /// The launch shape (a relaunch may differ from the kernel's own).
    pub shape: &'static str,
    pub id: u64,
    pub rows: u32,
    pub kind: RowKind,
    /// Report-validity flags to set (query files).
    pub flag: Option<Flag>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    Kernel,
    /// Idle sampling before the named kernel: zero counters.
    Idle,
    /// Kernel name unresolved: empty field, zero values.
    Empty,
}

/// One reason a query report is flagged (docs/formats.md#metric-csv-validity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    Split,
    Overrun,
    CtxSwitch,
    FreqChange,
    C6,
    Lost,
    Inconsistent,
    WithoutWorkload,
    ContextMismatch,
    QueryModeMismatch,
}

const FLAGS: &[Flag] = &[
    Flag::Split,
    Flag::Overrun,
    Flag::CtxSwitch,
    Flag::FreqChange,
    Flag::C6,
    Flag::Lost,
    Flag::Inconsistent,
    Flag::WithoutWorkload,
    Flag::ContextMismatch,
    Flag::QueryModeMismatch,
];

pub fn run(args: &MetricsArgs, seed: u64) -> Result<()> {
    let mode = if args.validity_columns {
        Mode::Query
    } else {
        args.mode
    };
    let spelling = Spelling {
        mode,
        unquoted_padded: args.unquoted_padded_names,
        trailing_separator: args.trailing_comma || args.unquoted_padded_names,
        floats: if args.unquoted_padded_names {
            FloatStyle::General
        } else {
            args.float_style
        },
        banner: !args.no_device_banner,
        last_instance_blank: !args.truncated_last_instance,
        header_per_instance: false,
    };
    let family = args.device_family.unwrap_or(if args.validity_columns {
        Family::Bmg
    } else {
        Family::Pvc
    });
    let columns = match family {
        Family::Pvc => PVC_COMPUTE_BASIC,
        Family::Bmg => BMG_COMPUTE_BASIC,
    };
    let file = AtomicFile::create(&args.out)
        .with_context(|| format!("{}: cannot create", args.out.display()))?;
    let mut w = MetricWriter::new(
        BufWriter::with_capacity(1 << 20, file),
        spelling,
        columns,
        family,
        seed,
    );
    let per_device = args.size.map(|s| s / args.devices.max(1) as u64);
    for device in 0..args.devices.max(1) {
        let plan = InstancePlan::from_args(args, device, seed);
        w.section(device, &plan, per_device)?;
    }
    let bytes = w.bytes;
    let file = w.into_inner().into_inner().map_err(|e| e.into_error())?;
    file.commit()
        .with_context(|| format!("{}: cannot write", args.out.display()))?;
    if !args.quiet {
        eprintln!(
            "unitrace-gen: {} ({:.1} MB)",
            args.out.display(),
            bytes as f64 / 1e6
        );
    }
    Ok(())
}

/// The instances of one device section, in file order, and how to make
/// more of them (`--size`).
pub struct InstancePlan {
    pub instances: Vec<Instance>,
    kernels: u32,
    samples: u32,
    mode: Mode,
}

impl InstancePlan {
    fn from_args(args: &MetricsArgs, device: u32, seed: u64) -> InstancePlan {
        let mode = if args.validity_columns {
            Mode::Query
        } else {
            args.mode
        };
        let mut plan = InstancePlan {
            instances: Vec::new(),
            kernels: args.kernels.max(1),
            samples: args.samples.max(1),
            mode,
        };
        let skip_commas = args.unquoted_padded_names;
        let mut d = Draw::new(seed, &[TAG_FLAGS, device as u64]);
        let mut id = 3 + device as u64 * 1000;
        for round in 0..args.instances.max(1) {
            for k in 0..plan.kernels as usize {
                let kernel = kernels::kernel(k);
                if skip_commas && kernel.name.contains(',') {
                    continue;
                }
                if args.idle_sampling
                    && mode == Mode::Sampling
                    && (k + round as usize).is_multiple_of(3)
                {
                    // Made-up ids above every real one (docs/formats.md#metric-csv-sampling).
                    let idle = 1_048_619 + plan.instances.len() as u64;
                    plan.instances
                        .push(plan.instance(*kernel, kernel.shape, idle, RowKind::Idle));
                }
                let mut inst = plan.instance(*kernel, kernel.shape, id, RowKind::Kernel);
                if args.validity_columns && (d.chance(0.08) || plan.instances.is_empty()) {
                    inst.flag = Some(*d.pick(FLAGS));
                }
                plan.instances.push(inst);
                id += 1 + (k as u64 % 3);
            }
            if round < args.empty_kernel_rows {
                plan.instances
                    .push(plan.instance(*kernels::kernel(0), "", id, RowKind::Empty));
                id += 1;
            }
        }
        if args.reshape {
            let k = kernels::kernel(0);
            plan.instances.push(plan.instance(
                *k,
                "[SIMD32 {8192; 1; 1} {256; 1; 1}]",
                id,
                RowKind::Kernel,
            ));
        }
        plan
    }

    /// The instances of `kernels`, `instances` rounds in launch order, one
    /// row each (query) or `samples` rows (sampling).
    pub fn rounds(
        kernels: &[MetricKernel],
        instances: u32,
        samples: u32,
        mode: Mode,
    ) -> InstancePlan {
        let mut plan = InstancePlan {
            instances: Vec::new(),
            kernels: kernels.len().max(1) as u32,
            samples: samples.max(1),
            mode,
        };
        let mut id = 4;
        for _ in 0..instances.max(1) {
            for k in kernels {
                plan.instances
                    .push(plan.instance(*k, k.shape, id, RowKind::Kernel));
                id += 1 + (id % 3);
            }
        }
        plan
    }

    fn instance(
        &self,
        kernel: MetricKernel,
        shape: &'static str,
        id: u64,
        kind: RowKind,
    ) -> Instance {
        let rows = match (self.mode, kind) {
            (Mode::Query, _) => 1,
            (_, RowKind::Empty) => 1,
            (_, RowKind::Idle) => 3,
            _ if kernel.gpu_us < 300.0 => 1.max(self.samples / 3),
            _ => self.samples,
        };
        Instance {
            kernel,
            shape,
            id,
            rows,
            kind,
            flag: None,
        }
    }

    /// Instance `i` of the section: the planned ones, then (for `--size`)
    /// further rounds of the same kernels.
    pub fn get(&self, i: usize) -> Instance {
        if let Some(inst) = self.instances.get(i) {
            return *inst;
        }
        let j = i - self.instances.len();
        let kernel = kernels::kernel(j % self.kernels as usize);
        let id = self.instances.last().map_or(3, |l| l.id) + 1 + j as u64;
        self.instance(*kernel, kernel.shape, id, RowKind::Kernel)
    }
}

const TAG_FLAGS: u64 = 20;
const TAG_ROWS: u64 = 21;

/// Writes metric files: one section per device, rows derived from the
/// kernels' behaviour.
pub struct MetricWriter<W: Write> {
    out: W,
    spelling: Spelling,
    columns: &'static [&'static str],
    family: Family,
    seed: u64,
    pub bytes: u64,
    line: Vec<u8>,
    /// Device clock of the next sample.
    clock: u64,
}

impl<W: Write> MetricWriter<W> {
    pub fn new(
        out: W,
        spelling: Spelling,
        columns: &'static [&'static str],
        family: Family,
        seed: u64,
    ) -> Self {
        MetricWriter {
            out,
            spelling,
            columns,
            family,
            seed,
            bytes: 0,
            line: Vec::with_capacity(4096),
            clock: 143_563_874_076,
        }
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.bytes += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    fn separator(&self) -> &'static str {
        if self.spelling.mode == Mode::Sampling {
            ", "
        } else {
            ","
        }
    }

    /// The header line (without newline).
    pub fn header(&self) -> String {
        let sep = self.separator();
        let mut cols: Vec<&str> = vec!["Kernel"];
        if self.spelling.header_per_instance {
            cols.extend(["Device", "SubDeviceId"]);
        } else {
            cols.push("GlobalInstanceId");
            if self.spelling.mode == Mode::Query {
                cols.push("SubDeviceId");
            }
        }
        cols.extend(self.columns.iter().copied());
        cols.extend(self.tail_columns());
        let mut h = cols.join(sep);
        if self.spelling.trailing_separator {
            h.push_str(sep);
        }
        h
    }

    fn tail_columns(&self) -> Vec<&'static str> {
        match self.spelling.mode {
            Mode::Sampling => SAMPLING_TAIL.to_vec(),
            Mode::Query => {
                let mut v = vec!["QueryBeginTime[ns]", "CoreFrequencyMHz[MHz]"];
                let n = if self.family == Family::Bmg {
                    VALIDITY.len()
                } else {
                    VALIDITY.len() - 1
                };
                v.extend(&VALIDITY[..n]);
                v
            }
        }
    }

    /// One device section: banner, header, instances (more of them until
    /// `min_bytes`, when given).
    pub fn section(
        &mut self,
        device: u32,
        plan: &InstancePlan,
        min_bytes: Option<u64>,
    ) -> io::Result<()> {
        let start = self.bytes;
        if self.spelling.banner {
            self.put(format!("\n=== Device #{device} Metrics ===\n\n").as_bytes())?;
        }
        let header = self.header();
        if !self.spelling.header_per_instance {
            self.put(header.as_bytes())?;
            self.put(b"\n")?;
        }
        let width = plan
            .instances
            .iter()
            .map(|i| i.kernel.name.len() + i.shape.len())
            .max()
            .unwrap_or(0);
        let mut i = 0;
        loop {
            let inst = plan.get(i);
            if self.spelling.header_per_instance {
                self.put(b"\n")?;
                self.put(header.as_bytes())?;
                self.put(b"\n")?;
            }
            self.instance(device, &inst, i, width)?;
            i += 1;
            let more =
                i < plan.instances.len() || min_bytes.is_some_and(|m| self.bytes - start < m);
            if more || self.spelling.last_instance_blank {
                self.put(b"\n")?;
            }
            if !more {
                return Ok(());
            }
        }
    }

    /// The rows of one instance.
    fn instance(
        &mut self,
        device: u32,
        inst: &Instance,
        ordinal: usize,
        width: usize,
    ) -> io::Result<()> {
        let mut d = Draw::new(self.seed, &[TAG_ROWS, device as u64, ordinal as u64]);
        let name = match inst.kind {
            RowKind::Kernel => format!("{}{}", inst.kernel.name, inst.shape),
            RowKind::Idle => format!("NoKernel(Before {}{})", inst.kernel.name, inst.shape),
            RowKind::Empty => String::new(),
        };
        let freq = *d.pick(&[1550.0, 1550.0, 1550.0, 1500.0, 1450.0]) * self.freq_scale();
        for row in 0..inst.rows {
            let sample = self.sample(inst, row, freq, &mut d);
            self.line.clear();
            self.kernel_field(&name, inst.kind, width);
            let sep = self.separator();
            let id = inst.id;
            self.line.extend_from_slice(sep.as_bytes());
            if self.spelling.header_per_instance {
                self.line
                    .extend_from_slice(format!("{device}{sep}0").as_bytes());
            } else {
                self.line
                    .extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
                if self.spelling.mode == Mode::Query {
                    let sub = if inst.flag == Some(Flag::Split) { 1 } else { 0 };
                    self.line
                        .extend_from_slice(format!("{sep}{sub}").as_bytes());
                }
            }
            let columns = self.columns;
            for col in columns.iter().copied().chain(self.tail_columns()) {
                self.line.extend_from_slice(sep.as_bytes());
                let v = match inst.kind {
                    RowKind::Kernel => counter(col, inst, &sample),
                    // Idle samples: time passes at the clock, nothing runs.
                    RowKind::Idle if is_clock(col) => counter(col, inst, &sample),
                    RowKind::Idle | RowKind::Empty => zero_like(col),
                };
                self.value(v);
            }
            if self.spelling.trailing_separator {
                self.line.extend_from_slice(sep.as_bytes());
            }
            self.line.push(b'\n');
            let line = std::mem::take(&mut self.line);
            self.put(&line)?;
            self.line = line;
        }
        Ok(())
    }

    fn freq_scale(&self) -> f64 {
        if self.family == Family::Bmg {
            1.85
        } else {
            1.0
        }
    }

    fn kernel_field(&mut self, name: &str, kind: RowKind, width: usize) {
        if kind == RowKind::Empty {
            return; // an empty field, unquoted
        }
        if self.spelling.unquoted_padded {
            for _ in name.len()..width {
                self.line.push(b' ');
            }
            self.line.extend_from_slice(name.as_bytes());
        } else {
            self.line.push(b'"');
            self.line.extend_from_slice(name.as_bytes());
            self.line.push(b'"');
        }
    }

    /// The physical quantities of one row.
    fn sample(&mut self, inst: &Instance, row: u32, freq: f64, d: &mut Draw) -> Sample {
        let k = &inst.kernel;
        let (t, activity) = match self.spelling.mode {
            Mode::Query => (k.gpu_us * 1000.0 * d.jitter(0.06), d.jitter(0.1)),
            Mode::Sampling => {
                let period = 50_000.0 * d.jitter(0.002);
                // Ramp-up, a wave through the kernel, a reduction tail.
                let x = (row as f64 + 0.5) / inst.rows as f64;
                let ramp = if row == 0 && inst.rows > 1 { 0.4 } else { 1.0 };
                let tail = if x > 0.85 && inst.rows > 2 { 0.6 } else { 1.0 };
                let wave = 1.0 + 0.25 * (x * 9.0).sin();
                (period, ramp * tail * wave * d.jitter(0.15))
            }
        };
        let begin = self.clock;
        self.clock += t as u64
            + if row + 1 == inst.rows {
                d.between(20_000, 400_000)
            } else {
                0
            };
        Sample {
            t: t.round(),
            freq,
            activity: activity.max(0.05),
            query_begin: begin,
            flag: inst.flag,
        }
    }

    fn value(&mut self, v: Value) {
        match v {
            Value::Int(i) => self
                .line
                .extend_from_slice(itoa::Buffer::new().format(i).as_bytes()),
            Value::Float(f) => match self.spelling.floats {
                FloatStyle::Fixed => self
                    .line
                    .extend_from_slice(format!("{:.6}", f as f32).as_bytes()),
                FloatStyle::General => self.line.extend_from_slice(general(f).as_bytes()),
            },
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Nanoseconds the row covers.
    pub t: f64,
    pub freq: f64,
    /// Utilisation factor of this row (around 1).
    pub activity: f64,
    pub query_begin: u64,
    pub flag: Option<Flag>,
}

#[derive(Debug, Clone, Copy)]
pub enum Value {
    Int(u64),
    Float(f64),
}

/// Columns that count time, not work.
fn is_clock(col: &str) -> bool {
    matches!(
        col,
        "GpuTime[ns]" | "GpuCoreClocks[cycles]" | "QueryBeginTime[ns]"
    ) || col.contains("Frequency")
}

fn zero_like(col: &str) -> Value {
    if is_float(col) {
        Value::Float(0.0)
    } else {
        Value::Int(0)
    }
}

fn is_float(col: &str) -> bool {
    col.ends_with("[%]") || col.ends_with("[GBpS]")
}

/// A stable number in [0, 1) per column name (what a counter of no
/// particular meaning measures, relative to its kind).
fn name_hash(col: &str) -> f64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in col.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (crate::rng::mix64(h) >> 11) as f64 / (1u64 << 53) as f64
}

/// XVE instructions per cycle the device could execute (PVC, 512 XVEs).
const XVE_PER_CYCLE: f64 = 512.0;

/// The value of counter `col` for a kernel row.
pub fn counter(col: &str, inst: &Instance, s: &Sample) -> Value {
    let k = &inst.kernel;
    let t = s.t;
    let a = s.activity;
    let cycles = t * s.freq / 1000.0;
    let read = k.read_gbps * t * a;
    let write = read * k.write_ratio;
    let ops = |per_ns: f64| per_ns * t * a;
    let alu0 = ops(k.ops.fp16 + k.ops.fp32 + k.ops.fp64) * 1.05;
    let xmx = ops(k.ops.xmx_fp16 + k.ops.xmx_bf16);
    let util = |events: f64| Value::Float((events / (cycles * XVE_PER_CYCLE) * 100.0).min(100.0));
    let int = |v: f64| Value::Int(v.max(0.0).round() as u64);
    match col {
        "GpuTime[ns]" => int(t),
        "GpuCoreClocks[cycles]" => int(cycles),
        "GpuSliceClocksCount[events]" => int(cycles),
        "AvgGpuCoreFrequencyMHz[MHz]"
        | "CoreFrequencyMHz[MHz]"
        | "AvgGpuSliceFrequencyMHz[MHz]"
        | "XveSliceFrequencyMHz[MHz]" => int(s.freq),
        "QueryBeginTime[ns]" => Value::Int(s.query_begin),
        "ReportReason" | "ContextIdValid" | "XVE_BUSY[events]" => Value::Int(1),
        "ContextId" => Value::Int(1023),
        "SourceId" | "StreamMarker" => Value::Int(0),
        "ResultUncertainty[%]" => Value::Float(if s.flag == Some(Flag::Overrun) {
            4.25
        } else {
            0.0
        }),
        "L3_BYTE_READ[bytes]" => int(read * k.l3_factor),
        "L3_BYTE_WRITE[bytes]" => int(write * (1.0 + (k.l3_factor - 1.0) / 4.0)),
        "GPU_MEMORY_BYTE_READ[bytes]" => int(read),
        "GPU_MEMORY_BYTE_WRITE[bytes]" => int(write),
        "GPU_MEMORY_BYTE_READ_RATE[GBpS]" => Value::Float(read / t),
        "GPU_MEMORY_BYTE_WRITE_RATE[GBpS]" => Value::Float(write / t),
        "XVE_ACTIVE[%]" => Value::Float((k.active * a).min(100.0)),
        "XVE_STALL[%]" => Value::Float((k.stall * a).min(100.0)),
        "XVE_THREADS_OCCUPANCY_ALL[%]" => Value::Float((25.0 + 45.0 * a).min(100.0)),
        "GPU_BUSY[%]" => Value::Float((88.0 + 10.0 * a.min(1.0)).min(100.0)),
        "XVE_INST_EXECUTED_FP16[events]" => int(ops(k.ops.fp16)),
        "XVE_INST_EXECUTED_FP32[events]" => int(ops(k.ops.fp32)),
        "XVE_INST_EXECUTED_FP64[events]" => int(ops(k.ops.fp64)),
        "XVE_INST_EXECUTED_XMX_FP16[events]" => int(ops(k.ops.xmx_fp16)),
        "XVE_INST_EXECUTED_XMX_BF16[events]" => int(ops(k.ops.xmx_bf16)),
        "XVE_INST_EXECUTED_XMX_ALL[events]" | "XVE_INST_EXECUTED_ALU2_ALL[events]" => int(xmx),
        "XVE_INST_EXECUTED_XMX_INT4[events]" | "XVE_INST_EXECUTED_XMX_INT8[events]" => {
            Value::Int(0)
        }
        "XVE_INST_EXECUTED_ALU0_ALL[events]" => int(alu0),
        "XVE_INST_EXECUTED_ALU1_ALL[events]" => int(alu0 * 0.7),
        "XVE_INST_EXECUTED_FP16_UTILIZATION[%]" => util(ops(k.ops.fp16)),
        "XVE_INST_EXECUTED_FP32_UTILIZATION[%]" => util(ops(k.ops.fp32)),
        "XVE_INST_EXECUTED_FP64_UTILIZATION[%]" => util(ops(k.ops.fp64)),
        "XVE_INST_EXECUTED_XMX_FP16_UTILIZATION[%]" => util(ops(k.ops.xmx_fp16) * 8.0),
        "XVE_INST_EXECUTED_XMX_BF16_UTILIZATION[%]" => util(ops(k.ops.xmx_bf16) * 8.0),
        "XVE_INST_EXECUTED_XMX_ALL_UTILIZATION[%]"
        | "XVE_INST_EXECUTED_ALU2_ALL_UTILIZATION[%]" => util(xmx * 8.0),
        "XVE_INST_EXECUTED_ALU0_ALL_UTILIZATION[%]" => util(alu0),
        "XVE_INST_EXECUTED_ALU1_ALL_UTILIZATION[%]" => util(alu0 * 0.7),
        _ => validity_or_generic(col, inst, s, cycles, read),
    }
}

/// Report-status columns, and counters without a model of their own:
/// a per-name fraction of what their kind allows.
fn validity_or_generic(col: &str, inst: &Instance, s: &Sample, cycles: f64, read: f64) -> Value {
    let f = s.flag;
    let bit = |flag: Flag, value: u64| Value::Int(if f == Some(flag) { value } else { 0 });
    match col {
        "CoreFrequencyChanged" => bit(Flag::FreqChange, 1),
        "QuerySplitOccurred" => bit(Flag::Split, 1),
        "ReportId" => Value::Int(1),
        "ReportsCount" => Value::Int(if f == Some(Flag::Split) { 2 } else { 1 }),
        "OverrunOccured" => bit(Flag::Overrun, 1),
        "MidQueryCtxSwitch" => bit(Flag::CtxSwitch, 8),
        "MidQueryC6" => bit(Flag::C6, 16),
        "MidQueryFreqChange" => bit(Flag::FreqChange, 32),
        "MidQueryTimer" | "MidQueryProgramming" | "MidQueryMarker" | "MidQueryMmioTrigger" => {
            Value::Int(0)
        }
        "ReportError" => Value::Int(match f {
            Some(Flag::Lost) => 1,
            Some(Flag::Inconsistent) => 2,
            Some(Flag::WithoutWorkload) => 16,
            Some(Flag::ContextMismatch) => 32,
            Some(Flag::QueryModeMismatch) => 64,
            _ => 0,
        }),
        "ReportLost" => bit(Flag::Lost, 1),
        "ReportInconsistent" => bit(Flag::Inconsistent, 2),
        "ReportCtxSwitchLost" => Value::Int(0),
        "ReportWithoutWorkload" => bit(Flag::WithoutWorkload, 16),
        "ReportContextMismatch" => bit(Flag::ContextMismatch, 32),
        "ReportQueryModeMismatch" => bit(Flag::QueryModeMismatch, 64),
        _ => {
            let h = name_hash(col);
            let k = &inst.kernel.ops;
            let a = if col.contains("XMX") && k.xmx_fp16 + k.xmx_bf16 == 0.0 {
                0.0
            } else {
                s.activity
            };
            if col.ends_with("[%]") {
                Value::Float((h * 40.0 * a).min(100.0))
            } else if col.ends_with("[bytes]") {
                Value::Int((read * (0.2 + 2.0 * h)).round() as u64)
            } else if col.ends_with("[threads]") {
                Value::Int((cycles * (0.3 + h) * a / 2.0).round() as u64)
            } else if col.ends_with("[messages]") {
                Value::Int(if inst.kernel.l3_factor > 2.0 {
                    (cycles * h * 0.001).round() as u64
                } else {
                    0
                })
            } else if col.ends_with("[events]") {
                Value::Int((cycles * h * 4.0 * a).round() as u64)
            } else {
                Value::Int(0)
            }
        }
    }
}

/// C++ stream (`%g`) spelling: six significant digits, trailing zeros
/// dropped, exponent form below 1e-4 and from 1e6 (`4.00791e-06`).
pub fn general(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { format!("{x}") };
    }
    let sci = format!("{:.5e}", x);
    let (mantissa, exp) = sci.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    if !(-5..6).contains(&exp) {
        let m = trim_zeros(mantissa);
        return format!("{m}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    let decimals = (5 - exp).max(0) as usize;
    trim_zeros(&format!("{:.*}", decimals, x)).to_string()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_floats_follow_the_stream_form() {
        assert_eq!(general(89.46), "89.46");
        assert_eq!(general(4.00791e-06), "4.00791e-06");
        assert_eq!(general(0.0), "0");
        assert_eq!(general(143563874076.0), "1.43564e+11");
        assert_eq!(general(100.0), "100");
        assert_eq!(general(0.000123456), "0.000123456");
    }
}
