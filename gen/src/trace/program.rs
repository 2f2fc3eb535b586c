//! One rank's program: what its host thread calls and what its device runs,
//! segment by segment (docs/unitrace-gen.md#the-scenario).
//!
//! A segment runs from the end of one collective (or the process start) to
//! the end of the next: first the rank's own work up to its arrival at the
//! collective, then the collective itself, which ends at the time the
//! schedule ([`super::schedule::plan`]) gives. Each segment draws
//! from its own random stream, and nothing before a segment's arrival
//! depends on absolute time or on earlier segments (the device is idle when
//! a collective ends), so the planning pass replays exactly the part up to
//! the arrival ([`arrival_offsets`]).
//!
//! The device model: a command starts when it was submitted plus a launch
//! latency, or when its engine is free, whichever is later; the host runs
//! ahead and waits at synchronisation calls. Device commands are handed to
//! the sink in batches at those points, as unitrace flushes them.

use std::io;

use super::event::{Args, Event, Flow, Item, Ns, Sink, Slice, Track};
use super::scenario::{
    tag, CollectiveKind, Identity, Plant, RangeForm, Scenario, COMPUTE, COPY_LINK, COPY_MAIN,
};
use crate::names::{self, api, Kernel, BLOCK};
use crate::rng::Draw;

/// `MPI_COMM_WORLD` as MPICH spells the handle.
const MPI_COMM_WORLD: i64 = 0x4400_0000;
const US: f64 = 1000.0;

/// A device command's name: a kernel of the catalog with one of its shapes,
/// or a memory command of [`MEMORY`].
#[derive(Debug, Clone, Copy)]
enum DeviceName {
    Kernel { kernel: u16, shape: u16 },
    Memory(u16),
}

/// The memory commands programs use: (kind, direction, bytes).
const MEMORY: &[(&str, &str, u64)] = &[
    ("Copy", "H2D", 16 << 20),
    ("Copy", "H2D", 4 << 20),
    ("Fill", "D", 1 << 20),
    ("Copy", "H2D", 256 << 10),
    ("Copy", "D2D", 2 << 20),
    ("Copy", "D2H", 4),
    ("Fill", "D", 64 << 10),
    ("Copy", "M2D", 4 << 20),
    ("Copy", "H2D", 4 << 10),
];
const MEM_WEIGHTS: u16 = 0;
const MEM_WEIGHTS_SMALL: u16 = 1;
const MEM_FILL: u16 = 2;
const MEM_INPUT: u16 = 3;
const MEM_D2D: u16 = 4;
const MEM_LOSS: u16 = 5;
const MEM_FILL_SMALL: u16 = 6;
const MEM_INPUT_PAGEABLE: u16 = 7;
const MEM_SMALL: u16 = 8;

/// Full names, built once: every kernel with every shape, every memory command.
struct Catalog {
    kernels: Vec<Vec<String>>,
    memory: Vec<String>,
}

fn catalog() -> &'static Catalog {
    static CATALOG: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
    CATALOG.get_or_init(|| Catalog {
        kernels: names::KERNELS
            .iter()
            .map(|k| {
                k.shapes
                    .iter()
                    .map(|s| format!("{}{}", k.name, s))
                    .collect()
            })
            .collect(),
        memory: MEMORY
            .iter()
            .map(|&(kind, dir, bytes)| names::memory_command(kind, dir, bytes))
            .collect(),
    })
}

impl DeviceName {
    fn text(self) -> &'static str {
        let c = catalog();
        match self {
            DeviceName::Kernel { kernel, shape } => &c.kernels[kernel as usize][shape as usize],
            DeviceName::Memory(m) => &c.memory[m as usize],
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct DeviceOp {
    engine: usize,
    name: DeviceName,
    start: Ns,
    end: Ns,
    id: u64,
}

/// A host range's name: fixed, or the step marker `PyTorch::ProfilerStep#<i>`.
#[derive(Debug, Clone, Copy)]
enum RangeName {
    Fixed(&'static str),
    Step(u32),
}

/// What a range carries in `args`.
#[derive(Debug, Clone, Copy)]
enum RangeArgs {
    None,
    /// A oneCCL call: `send_size` and `comm`.
    Ccl {
        bytes: u64,
    },
    /// A oneDNN primitive: its implementation string.
    Onednn,
    /// An MPI collective: sizes and communicator.
    Mpi {
        bytes: u64,
    },
}

#[derive(Debug, Clone, Copy)]
struct Open {
    name: RangeName,
    args: RangeArgs,
    start: Ns,
    begin_end: bool,
}

/// The program of one rank, writing into `sink`.
pub struct Program<'a, S: Sink> {
    sc: &'a Scenario,
    id: &'a Identity,
    sink: &'a mut S,
    draw: Draw,
    host: Ns,
    engine_free: [Ns; 3],
    next_id: u64,
    last_command: u64,
    stack: Vec<Open>,
    batch: Vec<DeviceOp>,
    step_name: String,
    /// The step whose compute is being written.
    step: u32,
}

/// Per collective, the time from its segment's start to this rank's
/// arrival (the first segment starts at the process start).
pub fn arrival_offsets(sc: &Scenario, id: &Identity) -> Vec<Ns> {
    let mut sink = NullSink;
    let mut p = Program::new(sc, id, &mut sink);
    (0..sc.collectives.len())
        .map(|seg| {
            p.engine_free = [0; 3];
            p.stack.clear();
            p.batch.clear();
            p.begin_segment(seg, 0);
            p.until_arrival(seg).expect("the null sink does not fail")
        })
        .collect()
}

struct NullSink;

impl Sink for NullSink {
    fn event(&mut self, _: &Event<'_>) -> io::Result<()> {
        Ok(())
    }
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a, S: Sink> Program<'a, S> {
    pub fn new(sc: &'a Scenario, id: &'a Identity, sink: &'a mut S) -> Self {
        Program {
            sc,
            id,
            sink,
            draw: Draw::new(sc.spec.seed, &[tag::SEGMENT, id.rank as u64, 0]),
            host: id.start,
            engine_free: [0; 3],
            next_id: sc.first_id,
            last_command: 0,
            stack: Vec::new(),
            batch: Vec::new(),
            step_name: String::new(),
            step: 0,
        }
    }

    /// The whole program: every segment, then the shutdown.
    pub fn run(mut self) -> io::Result<()> {
        self.sink.event(&Event::HostProcess { ts: self.id.start })?;
        let mut start = self.id.start;
        for seg in 0..self.sc.collectives.len() {
            self.begin_segment(seg, start);
            let arrival = self.until_arrival(seg)?;
            self.collective(seg, arrival)?;
            start = self.sc.collectives[seg].end;
        }
        self.begin_segment(self.sc.collectives.len(), start);
        self.shutdown()?;
        self.flush()?;
        self.sink.finish()
    }

    fn begin_segment(&mut self, seg: usize, start: Ns) {
        self.draw = Draw::new(
            self.sc.spec.seed,
            &[tag::SEGMENT, self.id.rank as u64, seg as u64],
        );
        self.host = start;
    }

    /// The rank's own work of segment `seg`; returns the arrival time at
    /// its collective.
    fn until_arrival(&mut self, seg: usize) -> io::Result<Ns> {
        match seg {
            0 => {} // MPI_Init_thread is the process's first call
            1 => self.init()?,
            s if s % 2 == 0 => self.step_compute((s as u32 - 2) / 2)?,
            _ => self.step_tail()?,
        }
        Ok(self.host)
    }

    // ---- building blocks ---------------------------------------------

    /// Host time passes (between calls).
    fn gap(&mut self, lo_us: f64, hi_us: f64) {
        self.host += (self.draw.uniform(lo_us, hi_us) * US) as Ns;
    }

    /// A host API call of about `us` microseconds.
    fn call(&mut self, name: &'static str, us: f64, args: Args<'_>, flow: Flow) -> io::Result<Ns> {
        let start = self.host;
        // Long set-up calls vary little from rank to rank.
        let spread = if us > 1_000.0 { 0.05 } else { 0.4 };
        let end = start + self.draw.ns(us * US, spread);
        self.host = end;
        self.slice(Track::Host, name, start, end, args, flow)?;
        self.gap(0.2, 1.5);
        Ok(start)
    }

    fn slice(
        &mut self,
        track: Track,
        name: &str,
        start: Ns,
        end: Ns,
        args: Args<'_>,
        flow: Flow,
    ) -> io::Result<()> {
        self.sink.event(&Event::Slice(Slice {
            track,
            name,
            start,
            end,
            args,
            flow,
        }))
    }

    fn range_form(&self, name: RangeName) -> bool {
        match self.sc.spec.ranges {
            RangeForm::X => false,
            RangeForm::Be => true,
            RangeForm::Mixed => match name {
                RangeName::Step(_) => true,
                RangeName::Fixed(n) => n.starts_with("dnnl::"),
            },
        }
    }

    fn open(&mut self, name: RangeName, args: RangeArgs) -> io::Result<()> {
        let begin_end = self.range_form(name);
        let open = Open {
            name,
            args,
            start: self.host,
            begin_end,
        };
        if begin_end {
            self.emit_range(&open, None)?;
        }
        self.stack.push(open);
        self.gap(0.3, 2.0);
        Ok(())
    }

    /// Closes the innermost open range a little after now (the planning
    /// pass may have nothing open: the time passes all the same).
    fn close(&mut self) -> io::Result<()> {
        self.gap(0.3, 2.0);
        self.close_at(self.host)
    }

    fn close_at(&mut self, end: Ns) -> io::Result<()> {
        self.host = end;
        match self.stack.pop() {
            Some(open) => self.emit_range(&open, Some(end)),
            None => Ok(()),
        }
    }

    /// Writes a range: its `B` (no end yet), its `E`, or its `X`.
    fn emit_range(&mut self, open: &Open, end: Option<Ns>) -> io::Result<()> {
        let name: &str = match open.name {
            RangeName::Fixed(n) => n,
            RangeName::Step(i) => {
                self.step_name.clear();
                self.step_name.push_str("PyTorch::ProfilerStep#");
                self.step_name.push_str(itoa::Buffer::new().format(i));
                &self.step_name
            }
        };
        let (size, comm) = match open.args {
            RangeArgs::Ccl { bytes } | RangeArgs::Mpi { bytes } => (bytes, 0),
            _ => (0, 0),
        };
        let size_item = [Item::Num(size)];
        let ccl_args: [(&str, &[Item<'_>]); 2] =
            [("send_size", &size_item), ("comm", &[Item::Str("world")])];
        let onednn_args: [(&str, &[Item<'_>]); 1] = [("impl", &[Item::Str("jit:gemm:any")])];
        let mpi_args = [
            ("ssize", size as i64),
            ("dsize", size as i64),
            ("comm", MPI_COMM_WORLD + comm),
        ];
        let mpi_bare = [("comm", MPI_COMM_WORLD)];
        let args = match open.args {
            RangeArgs::None => Args::Plain,
            RangeArgs::Ccl { .. } => Args::Itt(&ccl_args),
            RangeArgs::Onednn => Args::Itt(&onednn_args),
            RangeArgs::Mpi { bytes: 0 } => Args::Mpi(&mpi_bare),
            RangeArgs::Mpi { .. } => Args::Mpi(&mpi_args),
        };
        let event = match (open.begin_end, end) {
            (true, None) => Event::Begin {
                name,
                ts: open.start,
                args,
            },
            (true, Some(ts)) => Event::End { name, ts },
            (false, Some(end)) => Event::Slice(Slice {
                track: Track::Host,
                name,
                start: open.start,
                end,
                args,
                flow: Flow::None,
            }),
            (false, None) => return Ok(()),
        };
        self.sink.event(&event)
    }

    /// Appends a device command from the host: the API call, then the
    /// command on `engine` once submitted and the engine is free.
    fn submit(
        &mut self,
        call: &'static str,
        engine: usize,
        name: DeviceName,
        device_ns: Ns,
        latency_us: (f64, f64),
    ) -> io::Result<()> {
        let id = self.next_id;
        self.next_id += 1;
        let call_start = self.call(
            call,
            if call == api::LAUNCH { 7.0 } else { 10.0 },
            Args::Plain,
            Flow::Submit(id),
        )?;
        let ready = call_start + (self.draw.uniform(latency_us.0, latency_us.1) * US) as Ns;
        let start = ready.max(self.engine_free[engine]);
        let end = start + device_ns.max(1);
        self.engine_free[engine] = end;
        self.batch.push(DeviceOp {
            engine,
            name,
            start,
            end,
            id,
        });
        self.last_command = id;
        Ok(())
    }

    fn launch(&mut self, kernel: &Kernel, shape: usize) -> io::Result<()> {
        let index = names::kernel_index(kernel);
        for _ in 0..2 {
            self.call(api::SET_ARG, 0.3, Args::Plain, Flow::None)?;
        }
        let slow = if kernel.class == names::Class::Compute {
            // Planted launch-bound: kernels far shorter than the launches.
            let short = if self.plants(Plant::LaunchBound) {
                0.02
            } else {
                1.0
            };
            self.id.slow * short * self.slow_step_factor()
        } else {
            1.0
        };
        let device_ns = self.draw.ns(kernel.base_us * US * slow, 0.3);
        let name = DeviceName::Kernel {
            kernel: index as u16,
            shape: (shape % kernel.shapes.len()) as u16,
        };
        self.submit(api::LAUNCH, COMPUTE, name, device_ns, (4.0, 25.0))
    }

    /// A memory command: copies at 20 GB/s (from pageable memory 6 GB/s:
    /// staged), fills at 200 GB/s, plus a few microseconds (6 for a copy
    /// under 64 KiB, whose time is its fixed cost).
    fn memory(&mut self, engine: usize, which: u16) -> io::Result<()> {
        let (kind, dir, bytes) = MEMORY[which as usize];
        let gbps = match (kind, dir) {
            ("Fill", _) => 200.0,
            (_, "D2D") => 80.0,
            (_, "M2D") => 6.0,
            _ => 20.0,
        };
        let fixed = if kind == "Copy" && bytes < 64 << 10 && dir != "D2H" {
            6000.0
        } else {
            1500.0
        };
        let ns = self.draw.ns(fixed + bytes as f64 / gbps, 0.2);
        let call = if kind == "Fill" { api::FILL } else { api::COPY };
        self.submit(call, engine, DeviceName::Memory(which), ns, (3.0, 12.0))
    }

    /// Hands the batched device commands to the sink.
    fn flush(&mut self) -> io::Result<()> {
        for k in 0..self.batch.len() {
            let op = self.batch[k];
            self.slice(
                Track::Engine(op.engine),
                op.name.text(),
                op.start,
                op.end,
                Args::Device { id: op.id },
                Flow::Command(op.id),
            )?;
        }
        self.batch.clear();
        Ok(())
    }

    /// A host call that waits until every engine is idle.
    fn sync(&mut self, name: &'static str) -> io::Result<()> {
        let start = self.host;
        let idle = self.engine_free.iter().copied().max().unwrap_or(0);
        let end = (start + (self.draw.uniform(1.0, 3.0) * US) as Ns)
            .max(idle + (self.draw.uniform(1.0, 4.0) * US) as Ns);
        self.flush()?;
        self.slice(
            Track::Host,
            name,
            start,
            end,
            Args::Plain,
            Flow::Sync(self.last_command),
        )?;
        self.host = end;
        self.gap(0.5, 2.0);
        Ok(())
    }

    fn plants(&self, p: Plant) -> bool {
        self.sc.spec.plants.has(p)
    }

    /// The planted problems of one layer (docs/unitrace-gen.md#planted-problems).
    fn planted_in_layer(&mut self, layer: usize) -> io::Result<()> {
        if self.plants(Plant::SmallCopy) {
            for _ in 0..8 {
                self.memory(COPY_MAIN, MEM_SMALL)?;
            }
        }
        if self.plants(Plant::AllocChurn) {
            self.call("zeMemAllocDevice", 40.0, Args::Plain, Flow::None)?;
            self.call(api::MEM_FREE, 20.0, Args::Plain, Flow::None)?;
        }
        if self.plants(Plant::SerialisedCopy) {
            self.memory(COMPUTE, MEM_D2D)?;
        }
        if self.plants(Plant::Jit) && layer == self.sc.shape.layers as usize / 2 {
            self.call("zeModuleCreate", 2_000.0, Args::Plain, Flow::None)?;
        }
        if self.plants(Plant::SyncWait) {
            self.sync(api::EVENT_SYNC)?;
        }
        Ok(())
    }

    // ---- segments -------------------------------------------------------

    /// Start-up after MPI: Level Zero initialisation, module build,
    /// weights uploaded; arrives at the barrier.
    fn init(&mut self) -> io::Result<()> {
        let lean = self.sc.spec.lean_init;
        self.gap(5.0, 40.0);
        if !lean {
            self.call("MPI::MPI_Comm_rank", 1.5, Args::Plain, Flow::None)?;
            self.call("MPI::MPI_Comm_size", 0.3, Args::Plain, Flow::None)?;
        }
        self.call(
            "zeInit",
            if lean { 5_000.0 } else { 40_000.0 },
            Args::Plain,
            Flow::None,
        )?;
        if !lean {
            for (name, us) in [
                ("zeDriverGet", 4.0),
                ("zeDeviceGet", 0.8),
                ("zeContextCreate", 1.0),
                ("zeCommandListCreateImmediate", 900.0),
                ("zeCommandListCreateImmediate", 70.0),
                ("zeEventPoolCreate", 8.0),
            ] {
                self.call(name, us, Args::Plain, Flow::None)?;
            }
        }
        // Kernels are built (JIT) once, before the first step.
        self.call("zeModuleCreate", 13_000.0, Args::Plain, Flow::None)?;
        if !lean {
            for _ in 0..3 {
                self.call("zeKernelCreate", 9.0, Args::Plain, Flow::None)?;
            }
            self.call("zeMemAllocDevice", 45.0, Args::Plain, Flow::None)?;
            self.call("zeMemAllocDevice", 25.0, Args::Plain, Flow::None)?;
            self.call("zeMemAllocHost", 18.0, Args::Plain, Flow::None)?;
            self.memory(COMPUTE, MEM_FILL)?;
            self.memory(COMPUTE, MEM_FILL_SMALL)?;
            self.memory(COPY_MAIN, MEM_WEIGHTS)?;
            self.memory(COPY_MAIN, MEM_WEIGHTS)?;
        }
        self.memory(COPY_MAIN, MEM_WEIGHTS_SMALL)?;
        self.sync(api::LIST_SYNC)?;
        Ok(())
    }

    /// `--slow-step`'s factor when this rank is in its slow step, else 1.
    fn slow_step_factor(&self) -> f64 {
        match self.sc.spec.slow_step {
            Some((rank, step, factor)) if rank == self.id.rank && step == self.step => factor,
            _ => 1.0,
        }
    }

    /// A step's compute: its input copied in, one operation per layer,
    /// a wait for the device, then the gradient all-reduce is entered.
    fn step_compute(&mut self, step: u32) -> io::Result<()> {
        self.step = step;
        let step_ranges = self.sc.spec.step_ranges;
        if step > 0 && step_ranges {
            self.close()?; // the previous step
        }
        if step_ranges {
            self.open(RangeName::Step(step), RangeArgs::None)?;
        }
        if self.plants(Plant::HostBound) {
            self.open(
                RangeName::Fixed("PyTorch::DataLoader::__next__"),
                RangeArgs::None,
            )?;
            self.gap(3_000.0, 3_500.0);
            self.close()?;
        }
        if self.plants(Plant::PageableCopy) {
            self.memory(COPY_MAIN, MEM_INPUT_PAGEABLE)?;
        } else {
            self.memory(COPY_MAIN, MEM_INPUT)?;
        }
        for layer in 0..self.sc.shape.layers as usize {
            let op = BLOCK[layer % BLOCK.len()];
            let shape = layer / BLOCK.len();
            self.open(RangeName::Fixed(op.range), RangeArgs::None)?;
            if op.onednn {
                self.open(RangeName::Fixed(names::ONEDNN_MATMUL), RangeArgs::Onednn)?;
            }
            for k in op.kernels {
                self.launch(k, shape)?;
            }
            if op.onednn {
                self.close()?;
            }
            self.close()?;
            if self.draw.chance(0.03) {
                self.memory(COPY_LINK, MEM_D2D)?;
            }
            self.planted_in_layer(layer)?;
        }
        self.sync(api::EVENT_SYNC)?;
        self.open(
            RangeName::Fixed("PyTorch::oneccl_bindings_for_pytorch::allreduce"),
            RangeArgs::None,
        )?;
        Ok(())
    }

    /// The end of a step: the loss read back, then the loss all-reduce is
    /// entered.
    fn step_tail(&mut self) -> io::Result<()> {
        self.close()?; // the oneCCL binding
        self.open(RangeName::Fixed("PyTorch::aten::item"), RangeArgs::None)?;
        self.memory(COPY_MAIN, MEM_LOSS)?;
        self.sync(api::LIST_SYNC)?;
        self.close()?;
        Ok(())
    }

    /// The collective of segment `seg`, entered at `arrival`, ending at the
    /// scheduled time on every rank.
    fn collective(&mut self, seg: usize, arrival: Ns) -> io::Result<()> {
        let c = self.sc.collectives[seg];
        let name = c.kind.call_name(c.bytes);
        self.host = arrival;
        match c.kind {
            CollectiveKind::MpiInit | CollectiveKind::MpiBarrier | CollectiveKind::MpiAllreduce => {
                let args = match c.kind {
                    CollectiveKind::MpiInit => RangeArgs::None,
                    _ => RangeArgs::Mpi { bytes: c.bytes },
                };
                let open = Open {
                    name: RangeName::Fixed(name),
                    args,
                    start: arrival,
                    begin_end: false,
                };
                self.emit_range(&open, Some(c.end))?;
            }
            CollectiveKind::CclAllreduce => {
                self.open(RangeName::Fixed(name), RangeArgs::Ccl { bytes: c.bytes })?;
                let kernel = if c.bytes < 4 << 20 {
                    names::ALLREDUCE_SMALL
                } else {
                    names::ALLREDUCE_LARGE
                };
                self.launch(&kernel, 0)?;
                // The collective's kernel spins until the data is in: it
                // ends just before the call returns.
                let op = self.batch.last_mut().expect("just launched");
                op.end = c.end - 1_000;
                op.start = op.start.min(op.end - 1_000);
                self.engine_free[COMPUTE] = op.end;
                self.flush()?;
                self.close_at(c.end)?;
            }
        }
        self.host = c.end;
        Ok(())
    }

    /// After the last collective: the last step closed, memory freed, MPI
    /// finalised.
    fn shutdown(&mut self) -> io::Result<()> {
        if self.sc.spec.step_ranges && self.sc.shape.steps > 0 {
            self.close()?;
        }
        for _ in 0..2 {
            self.call(api::MEM_FREE, 20.0, Args::Plain, Flow::None)?;
        }
        self.call("MPI::MPI_Finalize", 800.0, Args::Plain, Flow::None)?;
        Ok(())
    }
}
