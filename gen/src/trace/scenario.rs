//! The scenario of a generated job (docs/unitrace-gen.md#the-scenario): who
//! the ranks are (pids, hosts, devices, clocks), how their work is shaped
//! (steps of layers, then collectives), and the one global schedule that
//! makes the collectives of all ranks agree: the n-th collective ends on
//! every rank at the same true time, set by its last arriver.
//!
//! The end times of the collectives are set by [`super::schedule::plan`],
//! from every rank's program.

use super::event::Ns;
use crate::rng::Draw;

/// Stream tags (first coordinate of every [`rng::key`] path of a trace).
pub mod tag {
    pub const RANK: u64 = 1;
    pub const SEGMENT: u64 = 2;
    pub const COLLECTIVE: u64 = 3;
    pub const CLOCK: u64 = 4;
    pub const JOB: u64 = 5;
    pub const CUT: u64 = 6;
}

/// The engines of a rank's device, in the order unitrace names them
/// (docs/formats.md#trace-json-ids).
pub const ENGINES: [&str; 3] = [
    "L0 Compute Engine<0,0>",
    "L0 Copy Engine<1,0>",
    "L0 Copy Engine<2,0>",
];
pub const COMPUTE: usize = 0;
pub const COPY_MAIN: usize = 1;
pub const COPY_LINK: usize = 2;

/// How host ranges (ITT, PyTorch, oneDNN, oneCCL) are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RangeForm {
    /// Every range a complete `X` event.
    X,
    /// Every range a `B`/`E` pair.
    Be,
    /// Steps and oneDNN primitives as `B`/`E`, the rest as `X`.
    Mixed,
}

/// The `args.metrics` link of device events (docs/formats.md#trace-json-metrics-link).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MetricsLink {
    None,
    Http,
    Https,
}

/// What the user asked for, independent of output format and layout.
#[derive(Debug, Clone)]
pub struct JobSpec {
    pub seed: u64,
    pub ranks: u32,
    pub app: String,
    pub ranks_per_node: u32,
    pub straggler: Option<u32>,
    /// Device time factor of the straggler's compute kernels.
    pub slowdown: f64,
    /// `--slow-step`: (rank, step, factor): that rank's compute kernels
    /// in that step take `factor` times as long.
    pub slow_step: Option<(u32, u32, f64)>,
    pub clock_offset_us: f64,
    pub pid_collision: bool,
    pub metrics_link: MetricsLink,
    pub ranges: RangeForm,
    /// Steps inside `PyTorch::ProfilerStep#<i>` ranges (`--steps`); without
    /// it the same iterations are written without step ranges.
    pub step_ranges: bool,
    /// A short start-up (few calls): for small files (`--events` under 400).
    pub lean_init: bool,
    /// Problems planted on every rank (`--plant`,
    /// docs/unitrace-gen.md#planted-problems).
    pub plants: Plants,
}

/// A problem `--plant` puts into every rank's program
/// (docs/unitrace-gen.md#planted-problems), each the one
/// `tracestat --findings` rule of the same name should find.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Plant {
    /// Each step's input copied from pageable host memory (`(M2D)`, 4 MiB).
    PageableCopy,
    /// Eight 4 KiB host-to-device copies per layer.
    SmallCopy,
    /// A `zeEventHostSynchronize` after each layer.
    SyncWait,
    /// Compute kernels 50 times shorter: the device outruns the launches.
    LaunchBound,
    /// 3 ms of host work (`PyTorch::DataLoader::__next__`) at each step's start.
    HostBound,
    /// Gradient all-reduces that take 2-3 ms to move their data.
    ExposedCommunication,
    /// A `zeMemAllocDevice` and a `zeMemFree` per layer.
    AllocChurn,
    /// A 2 ms `zeModuleCreate` in the middle of every step.
    Jit,
    /// A device-to-device copy per layer on the compute engine.
    SerialisedCopy,
}

/// The planted problems of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Plants(u32);

impl Plants {
    pub fn new(list: &[Plant]) -> Plants {
        Plants(list.iter().fold(0, |bits, &p| bits | 1 << p as u32))
    }

    pub fn has(self, p: Plant) -> bool {
        self.0 & (1 << p as u32) != 0
    }
}

/// How much work each rank does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub steps: u32,
    /// Operations (layers) per step, each one host range and its kernels.
    pub layers: u32,
}

/// One collective of the global schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Collective {
    pub kind: CollectiveKind,
    pub bytes: u64,
    /// Time the data takes once the last rank arrived.
    pub transfer: Ns,
    /// True end time on every rank (set by [`super::schedule::plan`]).
    pub end: Ns,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollectiveKind {
    /// `MPI::MPI_Init_thread`: every rank leaves it at the same time (not a
    /// collective a reader matches, but it synchronises the start).
    MpiInit,
    /// `MPI::MPI_Barrier` after initialisation.
    MpiBarrier,
    /// `oneCCL::API::ALLREDUCE_*` of the gradients, with device kernels.
    CclAllreduce,
    /// `MPI::MPI_Allreduce` of a scalar (the loss) at the end of a step.
    MpiAllreduce,
}

impl CollectiveKind {
    pub fn call_name(self, bytes: u64) -> &'static str {
        match self {
            CollectiveKind::MpiInit => "MPI::MPI_Init_thread",
            CollectiveKind::MpiBarrier => "MPI::MPI_Barrier",
            CollectiveKind::MpiAllreduce => "MPI::MPI_Allreduce",
            CollectiveKind::CclAllreduce if bytes < 64 << 10 => "oneCCL::API::ALLREDUCE_SMALL",
            CollectiveKind::CclAllreduce if bytes < 4 << 20 => "oneCCL::API::ALLREDUCE_MEDIUM",
            CollectiveKind::CclAllreduce => "oneCCL::API::ALLREDUCE_LARGE",
        }
    }
}

/// Per-rank identity: what the trace says about who wrote it.
#[derive(Debug, Clone)]
pub struct Identity {
    pub rank: u32,
    pub pid: u32,
    pub node: u32,
    pub host: String,
    /// Synthetic device pid `0xFFFFFFFF - (rank << 5)` (docs/formats.md#trace-json-ids).
    pub device_pid: u32,
    pub device_name: String,
    /// Added to every true time of this rank (a multiple of 1 us).
    pub clock_offset: i64,
    /// True time the process starts.
    pub start: Ns,
    /// Device time factor of compute kernels (the straggler's slowdown, else 1).
    pub slow: f64,
}

/// The writer's time grid for starts (unitrace prints doubles of us: 0.25
/// us steps at epoch scale).
pub const GRID_NS: u64 = 250;

impl Identity {
    /// The printed time of a true time.
    pub fn stamp(&self, true_ns: Ns) -> Ns {
        (true_ns as i64 + self.clock_offset) as Ns
    }

    /// The printed start and end of an interval: the start on the writer's
    /// grid, the end exact.
    pub fn stamp_span(&self, start: Ns, end: Ns) -> (Ns, Ns) {
        let s = self.stamp(start);
        (s - s % GRID_NS, self.stamp(end))
    }

    pub fn process_name(&self) -> String {
        format!("RANK {} HOST<{}>", self.rank, self.host)
    }

    pub fn device_process_name(&self) -> String {
        format!("RANK {} {}", self.rank, self.device_name)
    }

    pub fn engine_thread_name(&self, engine: usize) -> String {
        format!("Thread {} {}", self.pid, ENGINES[engine])
    }
}

/// The planned job: identities are computed on demand, the schedule is
/// stored (one entry per collective).
#[derive(Debug, Clone)]
pub struct Scenario {
    pub spec: JobSpec,
    pub shape: Shape,
    pub job_start: Ns,
    pub collectives: Vec<Collective>,
    /// Instance id of each rank's first device command: 1, except when
    /// sizing a job, where a small trial stands for a large one and its ids
    /// must be as long as the large job's.
    pub first_id: u64,
}

impl Scenario {
    /// The job of `shape` with its collectives drawn and their end times
    /// still unknown (0): [`super::schedule::plan`] sets them.
    pub fn unplanned(spec: JobSpec, shape: Shape) -> Scenario {
        let mut job = Draw::new(spec.seed, &[tag::JOB]);
        // A start in December 2024, a few seconds apart per seed.
        let job_start = 1_733_400_000_000_000_000 + job.between(0, 60_000) * 1_000_000;
        let collectives = schedule(&spec, shape);
        Scenario {
            spec,
            shape,
            job_start,
            collectives,
            first_id: 1,
        }
    }

    pub fn ranks(&self) -> u32 {
        self.spec.ranks
    }

    pub fn identity(&self, rank: u32) -> Identity {
        let spec = &self.spec;
        let per_node = spec.ranks_per_node.max(1);
        let node = rank / per_node;
        let local = rank % per_node;
        let mut d = Draw::new(spec.seed, &[tag::RANK, rank as u64]);
        // pids grow with the rank as a launcher starts them; with
        // --pid-collision every node reuses the same pids.
        let pid_rank = if spec.pid_collision { local } else { rank };
        let pid = 100_003 + pid_rank * 29 + (pid_rank * 7) % 11;
        let start_jitter = d.between(0, 40_000) * 1_000;
        let mut c = Draw::new(spec.seed, &[tag::CLOCK, rank as u64]);
        let x = spec.clock_offset_us;
        let clock_offset = if x > 0.0 {
            (c.uniform(-x, x).round() as i64) * 1_000
        } else {
            0
        };
        let host = format!("x{}c{}s{}b0n0", 1000 + node / 64, (node / 8) % 8, node % 8);
        let buses = [24, 66, 108, 154, 202, 240];
        let device_name = format!(
            "DEVICE<{host}>[Intel(R) Data Center GPU Max 1550] 0:{}:0:{} #{}",
            buses[(local as usize / 2) % buses.len()],
            local % 2,
            local
        );
        Identity {
            rank,
            pid,
            node,
            host,
            device_pid: 0xFFFF_FFFFu32.wrapping_sub(rank.wrapping_shl(5)),
            device_name,
            clock_offset,
            start: self.job_start + start_jitter,
            slow: if spec.straggler == Some(rank) {
                spec.slowdown
            } else {
                1.0
            },
        }
    }
}

/// The collectives of a job of `shape`, in call order: `MPI_Init_thread`,
/// a barrier after the device set-up, then per step the gradient
/// all-reduce and the loss all-reduce. Sizes and transfer times are the job's (the same on every
/// rank): that is what lets a reader match them across ranks.
fn schedule(spec: &JobSpec, shape: Shape) -> Vec<Collective> {
    let ranks = spec.ranks.max(1) as f64;
    let mut out = Vec::with_capacity(2 + 2 * shape.steps as usize);
    let mut push = |kind, bytes: u64, n: usize| {
        let mut d = Draw::new(spec.seed, &[tag::COLLECTIVE, n as u64]);
        let base_us = match kind {
            CollectiveKind::MpiInit if spec.lean_init => d.uniform(20_000.0, 40_000.0),
            CollectiveKind::MpiInit => d.uniform(150_000.0, 300_000.0),
            CollectiveKind::MpiBarrier => d.uniform(15.0, 40.0),
            CollectiveKind::MpiAllreduce => d.uniform(20.0, 60.0),
            CollectiveKind::CclAllreduce if spec.plants.has(Plant::ExposedCommunication) => {
                d.uniform(2_000.0, 3_000.0)
            }
            CollectiveKind::CclAllreduce => d.uniform(30.0, 45.0),
        };
        // 25 GB/s per link, bus factor 2(n-1)/n of an all-reduce.
        let wire_us = bytes as f64 * 2.0 * (ranks - 1.0) / ranks / 25e3;
        out.push(Collective {
            kind,
            bytes,
            transfer: ((base_us + wire_us) * 1000.0).round() as Ns,
            end: 0,
        });
    };
    push(CollectiveKind::MpiInit, 0, 0);
    push(CollectiveKind::MpiBarrier, 0, 1);
    for step in 0..shape.steps as usize {
        let mut d = Draw::new(spec.seed, &[tag::COLLECTIVE, 1 << 40 | step as u64]);
        // Gradient buckets from 16 KiB to 64 MiB, mostly a few MiB.
        let exp = 14 + (d.unit() * d.unit() * 13.0) as u32;
        let bytes = (1u64 << exp) * d.between(1, 3);
        push(CollectiveKind::CclAllreduce, bytes, 2 + 2 * step);
        push(CollectiveKind::MpiAllreduce, 8, 3 + 2 * step);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(ranks: u32) -> JobSpec {
        JobSpec {
            seed: 3,
            ranks,
            app: "python".into(),
            ranks_per_node: 12,
            straggler: Some(1),
            slowdown: 1.45,
            slow_step: None,
            clock_offset_us: 0.0,
            pid_collision: false,
            metrics_link: MetricsLink::None,
            ranges: RangeForm::Mixed,
            step_ranges: true,
            lean_init: false,
            plants: Plants::default(),
        }
    }

    #[test]
    fn device_pids_count_down_per_rank() {
        let sc = Scenario::unplanned(
            spec(2),
            Shape {
                steps: 1,
                layers: 1,
            },
        );
        assert_eq!(sc.identity(0).device_pid, 0xFFFF_FFFF);
        assert_eq!(sc.identity(1).device_pid, 0xFFFF_FFFF - 32);
    }
}
